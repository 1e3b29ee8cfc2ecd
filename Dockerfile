# kernlab in a container, on NVIDIA's CUDA development image (NVRTC and the CUDA headers are what
# kernlab compiles kernels with at run time, so the image keeps the toolkit).
#   docker build -t kernlab .
#   docker run --rm --gpus all kernlab                      # the default job
#   docker run --rm --gpus all -v "$PWD/my_kernels:/work/my_kernels" kernlab \
#       --kernels-dir my_kernels --variant my_idea,reduce5,cub
#   docker run --rm kernlab --compile-only --variant all    # no GPU needed
# The plugins (CUB, cuBLAS baselines) are compiled ahead of time for CUDA_ARCHITECTURES; kernels
# are compiled by NVRTC for whatever GPU the container is given.
ARG CUDA_IMAGE=nvidia/cuda:13.0.0-devel-ubuntu24.04
FROM ${CUDA_IMAGE}
ARG CUDA_ARCHITECTURES="80;90"

# The libraries of the build, as scripts/setup.sh installs them (tests/container_test.sh checks
# that this list stays a part of that one); the test, fuzz, MPI and Python packages are left out.
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      build-essential cmake libboost-dev libboost-program-options-dev nlohmann-json3-dev \
      libxxhash-dev libtomlplusplus-dev libeigen3-dev \
 && rm -rf /var/lib/apt/lists/*

COPY . /src
RUN cmake -S /src -B /tmp/build -DCMAKE_BUILD_TYPE=Release -DKERNLAB_ENABLE_TESTS=OFF \
      -DKERNLAB_MPI=OFF -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES}" \
 && cmake --build /tmp/build -j"$(nproc)" \
 && cmake --install /tmp/build --prefix /opt/kernlab \
 && rm -rf /tmp/build /src

ENV PATH=/opt/kernlab/bin:${PATH}
WORKDIR /work
ENTRYPOINT ["kernlab"]
