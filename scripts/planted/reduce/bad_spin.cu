// A kernel that spins forever, planted beside the shipped reduce variants by the planted-hang
// checks of scripts/gpu_devices.sh and scripts/gpu_mpi.sh (`--kernels-dir scripts/planted`): the
// GPU that takes its row must lose that row only (a timeout, a worker restart).
/* kernlab
family: reduce
entry:  bad_spin<BLOCK, T, OP>
blocks: 256
tile:   BLOCK
bounds: checked
order:  9
*/
template <unsigned BLOCK, typename T, typename OP>
__global__ void bad_spin(const T* in, T* out, unsigned n) {
  volatile unsigned* flag = reinterpret_cast<volatile unsigned*>(out);
  if (threadIdx.x == 0) while (flag[0] != 0x12345678u || n != 0) {}
}
