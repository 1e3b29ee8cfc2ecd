// libkernlab_mpi.so: the only file that includes mpi.h (mpi/transport_abi.hpp says why). Every
// call goes through the communicator `comm`, a duplicate of MPI_COMM_WORLD whose errors are
// returned to kernlab instead of ending the job.
#include "mpi/transport_abi.hpp"

#include <mpi.h>

#include <cstring>

namespace {

MPI_Comm comm = MPI_COMM_NULL;

int init(int* argc, char*** argv) {
  int provided = 0;
  int rc = MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
  if (rc != MPI_SUCCESS) return rc;
  if (provided < MPI_THREAD_SERIALIZED) return -1;
  rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (rc != MPI_SUCCESS) return rc;
  return MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
}

int finalize() {
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  return MPI_Finalize();
}

void abort_job(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

int ranks(int* rank, int* size, int* local_rank, int* local_size) {
  int rc = MPI_Comm_rank(comm, rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(comm, size);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Comm local = MPI_COMM_NULL;
  rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, &local);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Comm_rank(local, local_rank);
  MPI_Comm_size(local, local_size);
  return MPI_Comm_free(&local);
}

int host(char* buf, int len) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int n = 0;
  const int rc = MPI_Get_processor_name(name, &n);
  if (rc != MPI_SUCCESS || len <= 0) return rc;
  const int k = n < len - 1 ? n : len - 1;
  std::memcpy(buf, name, static_cast<std::size_t>(k));
  buf[k] = '\0';
  return MPI_SUCCESS;
}

int isend(const void* buf, int n, int to, int tag, void** request) {
  auto* r = new MPI_Request(MPI_REQUEST_NULL);
  const int rc = MPI_Isend(buf, n, MPI_BYTE, to, tag, comm, r);
  if (rc != MPI_SUCCESS) {
    delete r;
    return rc;
  }
  *request = r;
  return MPI_SUCCESS;
}

int test(void* request, int* done) {
  auto* r = static_cast<MPI_Request*>(request);
  const int rc = MPI_Test(r, done, MPI_STATUS_IGNORE);
  if (rc == MPI_SUCCESS && *done) delete r;
  return rc;
}

void cancel(void* request) {
  auto* r = static_cast<MPI_Request*>(request);
  if (*r != MPI_REQUEST_NULL) {
    MPI_Cancel(r);
    MPI_Request_free(r);
  }
  delete r;
}

int iprobe(int from, int* found, int* tag, int* n) {
  MPI_Status status;
  int rc = MPI_Iprobe(from, MPI_ANY_TAG, comm, found, &status);
  if (rc != MPI_SUCCESS || !*found) return rc;
  *tag = status.MPI_TAG;
  return MPI_Get_count(&status, MPI_BYTE, n);
}

int recv(void* buf, int n, int from, int tag) {
  return MPI_Recv(buf, n, MPI_BYTE, from, tag, comm, MPI_STATUS_IGNORE);
}

void error_text(int rc, char* buf, int len) {
  if (len <= 0) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int n = 0;
  if (rc == -1) {
    std::strncpy(text, "the MPI library offers no MPI_THREAD_SERIALIZED", sizeof text - 1);
    n = static_cast<int>(std::strlen(text));
  } else if (MPI_Error_string(rc, text, &n) != MPI_SUCCESS) {
    n = 0;
  }
  const int k = n < len - 1 ? n : len - 1;
  std::memcpy(buf, text, static_cast<std::size_t>(k));
  buf[k] = '\0';
}

const kl_mpi_transport table = {KL_MPI_TRANSPORT_ABI,
                                init,
                                finalize,
                                abort_job,
                                ranks,
                                host,
                                isend,
                                test,
                                cancel,
                                iprobe,
                                recv,
                                error_text};

}  // namespace

extern "C" __attribute__((visibility("default"))) const kl_mpi_transport* kl_mpi_transport_get() {
  return &table;
}
