// The MPI calls kernlab makes, behind a C table that libkernlab_mpi.so (transport_mpi.cpp, built
// only when CMake finds MPI) fills in. kernlab loads that library only when mpirun or srun started
// it, so the kernlab binary never links libmpi: it runs as before where no MPI is installed.
#pragma once

extern "C" {

/// Bumped whenever the table changes: a library of another version is refused.
#define KL_MPI_TRANSPORT_ABI 1

struct kl_mpi_transport {
  int abi;  ///< KL_MPI_TRANSPORT_ABI
  /// MPI_Init_thread (MPI_THREAD_SERIALIZED at least) and a duplicate of MPI_COMM_WORLD whose
  /// errors are returned; 0, or an MPI error code (-1: the thread level is not offered).
  int (*init)(int* argc, char*** argv);
  int (*finalize)(void);
  void (*abort)(int code);
  /// This rank in the world and on its host (MPI_Comm_split_type shared).
  int (*ranks)(int* rank, int* size, int* local_rank, int* local_size);
  /// The host's name into buf (NUL-terminated).
  int (*host)(char* buf, int len);
  /// MPI_Isend of n bytes; *request is the library's until test() says done or cancel().
  int (*isend)(const void* buf, int n, int to, int tag, void** request);
  /// *done = 1 once the send completed (the request is then released).
  int (*test)(void* request, int* done);
  /// Gives up on a send and releases its request.
  void (*cancel)(void* request);
  /// MPI_Iprobe from rank `from`, any tag: *found, and the message's tag and size in bytes.
  int (*iprobe)(int from, int* found, int* tag, int* n);
  /// MPI_Recv of the message iprobe found.
  int (*recv)(void* buf, int n, int from, int tag);
  /// An MPI error code's text into buf (NUL-terminated).
  void (*error_text)(int rc, char* buf, int len);
};

/// The one symbol libkernlab_mpi.so exports.
const struct kl_mpi_transport* kl_mpi_transport_get(void);
}
