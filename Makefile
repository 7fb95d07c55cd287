# ltrain.h - build the examples, the tests and the benchmarks into build/.
#   make            examples and tests
#   make header     regenerate ltrain.h from its parts src/NN_name.h (edit those, never ltrain.h)
#   make train      train a small GPT on the embedded default text (DATA=file.txt for your own)
#   make test       the test suite (plain build, then the same suite under ASan+UBSan)
#   make sanitize   only the sanitizer build of the suite
#   make compile-matrix   the header under C99/C11/C++/LTRAIN_STATIC/two translation units, gcc and clang
#   make mpi        data-parallel builds (mpicc -DLTRAIN_MPI): build/train_gpt_mpi, build/test_mpi
#   make cuda       the CUDA backend (nvcc -DLTRAIN_CUDA): build/train_gpt_cuda, build/test_cuda
CC      ?= cc
CFLAGS  ?= -O2 -march=native -fopenmp
WARN     = -std=c99 -Wall -Wextra -Wpedantic -Werror
LDLIBS   = -lm
SANFLAGS = -O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer
EXAMPLES = $(patsubst examples/%.c,build/%,$(wildcard examples/*.c))
TESTSRC  = tests/test_main.c $(wildcard tests/test_*.c) tests/lt_test.h

DATA    ?= ltrain.h
STEPS   ?= 1500

.PHONY: all test sanitize compile-matrix train clean header
.PHONY: mpi
MPICC   ?= mpicc
all: $(EXAMPLES) build/test_all

build/%: examples/%.c ltrain.h examples/lesson.h examples/flags.h examples/tokenizer.h | build
	$(CC) $(WARN) $(CFLAGS) -I. $< -o $@ $(LDLIBS)

build/test_all: $(TESTSRC) ltrain.h | build
	$(CC) $(WARN) $(CFLAGS) -I. -Itests tests/test_main.c -o $@ $(LDLIBS)

build/test_san: $(TESTSRC) ltrain.h | build
	$(CC) $(WARN) $(SANFLAGS) -I. -Itests tests/test_main.c -o $@ $(LDLIBS)

build:
	mkdir -p build/tmp

# ltrain.h is generated: the parts under src/, concatenated in order (src/amalgamate.sh).
header:
	sh src/amalgamate.sh

# The layout rules (tests/layout.c): no part calls a later part, no LTRAIN_CUDA guard outside
# the CUDA part, at most one function over 100 lines, every path named in a comment exists,
# every second-level tag (@@OPS.attention, ...) listed in the contents and found once.
build/layout: tests/layout.c | build
	$(CC) $(WARN) -O1 $< -o $@

# The README's test command: the suite, the compile matrix, the suite under sanitizers, the
# hardening checks, the MPI tests and every command of README.md.
# (tests/run_all.sh runs each stage and ends with the totals: "N passed, N failed, N skipped")
test: build/test_all build/test_san build/train_gpt build/train_gpt_san build/sample_gpt build/test_oom build/layout \
      build/tokenize build/lesson_sequences
	MAKE="$(MAKE)" sh tests/run_all.sh
# the lessons too: tests/test_lessons.c runs them with flags they must refuse
test: $(patsubst examples/%.c,build/%,$(wildcard examples/lesson_*.c))

# The README's first command: a small GPT on the library's own source text (no download),
# samples before and after, a checkpoint in build/model.safetensors.
train: build/train_gpt
	./build/train_gpt --data $(DATA) --steps $(STEPS) --sample 300 --temperature 0.8 \
	    --save build/model.safetensors --log build/train.jsonl

# Data parallel over MPI: run with mpirun -np N build/train_gpt_mpi ... (tests/test_mpi.sh runs the tests).
mpi: build/train_gpt_mpi build/test_mpi

build/train_gpt_mpi: examples/train_gpt.c ltrain.h | build
	$(MPICC) $(WARN) $(CFLAGS) -DLTRAIN_MPI -I. $< -o $@ $(LDLIBS)

build/test_mpi: tests/test_mpi.c ltrain.h | build
	$(MPICC) $(WARN) $(CFLAGS) -DLTRAIN_MPI -I. -Itests $< -o $@ $(LDLIBS)

build/bench_dist: bench/dist.c ltrain.h | build
	$(MPICC) $(WARN) $(CFLAGS) -DLTRAIN_MPI -I. $< -o $@ $(LDLIBS)

sanitize: build/test_san
	ASAN_OPTIONS=detect_leaks=1 ./build/test_san

compile-matrix: | build
	sh tests/compile_matrix.sh

clean:
	rm -rf build

# Sequences (bench/seq.c): padding and real tokens/s of bucketed vs random batching on
# tinyshakespeare paragraphs, then time to a validation loss with a length schedule vs fixed T.
.PHONY: bench-seq
bench-seq: build/bench_seq
	./build/bench_seq pad
	./build/bench_seq sched

build/bench_seq: bench/seq.c ltrain.h | build
	$(CC) $(WARN) $(CFLAGS) -I. $< -o $@ $(LDLIBS)

# A step's products in the step's order against each alone (bench/gemm_seq.c): do cold operands cost?
.PHONY: bench-gemm-seq
bench-gemm-seq: build/bench_gemm_seq
	for t in 1 2; do ./build/bench_gemm_seq 2048 256 4 $$t; ./build/bench_gemm_seq 256 768 12 $$t; done

build/bench_gemm_seq: bench/gemm_seq.c ltrain.h | build
	$(CC) $(WARN) $(CFLAGS) -I. $< -o $@ $(LDLIBS)

# Attention alone (bench/attention.c): forward/backward kernel ms at the bench configs' shapes, 1 and 2 threads,
# the rate of the products it needs against lt_sgemm's, and the block products alone in cache.
.PHONY: bench-attention
bench-attention: build/bench_attention
	./build/bench_attention --blocks

build/bench_attention: bench/attention.c ltrain.h | build
	$(CC) $(WARN) $(CFLAGS) -I. $< -o $@ $(LDLIBS)

# The GEMM's packers of 16-bit operands alone (bench/pack.c): nanoseconds per value converted.
.PHONY: bench-pack
bench-pack: build/bench_pack
	./build/bench_pack

build/bench_pack: bench/pack.c ltrain.h | build
	$(CC) $(WARN) $(CFLAGS) -I. $< -o $@ $(LDLIBS)

# The optimizer's memory floor (bench/bandwidth.c): AdamW's bytes a second against plain loops.
.PHONY: bench-bandwidth
bench-bandwidth: build/bench_bandwidth
	./build/bench_bandwidth

build/bench_bandwidth: bench/bandwidth.c ltrain.h | build
	$(CC) $(WARN) $(CFLAGS) -I. $< -o $@ $(LDLIBS)

# Checkpoints (bench/checkpoint.c): seconds to save and load GPT-2 124M with AdamW, and the memory a load needs.
.PHONY: bench-checkpoint
bench-checkpoint: build/bench_checkpoint
	./build/bench_checkpoint

build/bench_checkpoint: bench/checkpoint.c ltrain.h | build
	$(CC) $(WARN) $(CFLAGS) -I. $< -o $@ $(LDLIBS) -lpthread

# Optimizers (bench/optimizers.c): AdamW, Lion, AdEMAMix, Muon, SOAP on tinyshakespeare, a 3-value
# lr grid each, the same token budget: validation loss, time per step, optimizer-state bytes.
.PHONY: bench-optimizers
bench-optimizers: build/bench_optimizers
	./build/bench_optimizers --steps 300 --threads 1 --md build/optimizers.md

build/bench_optimizers: bench/optimizers.c ltrain.h | build
	$(CC) $(WARN) $(CFLAGS) -I. $< -o $@ $(LDLIBS)

# make bench (bench/README.md): the GEMM table (bench/gemm.py: lt_sgemm against MKL through torch.mm,
# PyPI numpy's OpenBLAS and Debian's OpenBLAS -> build/bench_gemm.md), then the training step of
# char-small, gpt-mini, gpt2-124M and llama-mini against PyTorch 2.x eager (SDPA) and torch.compile
# (bench/train_step.py -> bench/results.md, the GEMM table appended), then ms per step, planned
# activations and peak RSS per precision (build/bench_precision.md).  PyTorch 2.x and numpy come
# from PyPI into build/torch-venv (created at the first run; TORCH_PIP sets pip's arguments, e.g.
# TORCH_PIP="torch numpy --extra-index-url https://download.pytorch.org/whl/cpu" for the smaller
# CPU-only wheel); PYTHON=/path/to/python uses that interpreter's torch and numpy instead.  Debian's
# OpenBLAS (apt install libopenblas-dev) and Debian's torch 1.13 (python3-torch) add columns where
# installed.  BENCH_QUICK=1 make bench: a few shapes, char-small and llama-mini, few steps, tables in
# build/ (proves the scripts run; the full run takes about an hour on 2 cores).
OPENBLAS_INC ?= /usr/include/x86_64-linux-gnu/openblas-pthread
TORCH_VENV   = build/torch-venv
TORCH_PIP   ?= torch numpy
# the Python with torch: PYTHON when given on the command line or in the environment, else the venv
BENCH_PY     = $(if $(filter file undefined,$(origin PYTHON)),$(TORCH_VENV)/bin/python,$(PYTHON))
.PHONY: bench bench-venv
build/bench_gemm: bench/gemm.c ltrain.h | build
	if [ -f $(OPENBLAS_INC)/cblas.h ]; then $(CC) $(WARN) $(CFLAGS) -I. -I$(OPENBLAS_INC) $< -o $@ -lopenblas $(LDLIBS); \
	else $(CC) $(WARN) $(CFLAGS) -DNO_OPENBLAS -I. $< -o $@ $(LDLIBS); fi
build/bench_train_step: bench/train_step.c ltrain.h | build
	$(CC) $(WARN) $(CFLAGS) -I. $< -o $@ $(LDLIBS)
$(TORCH_VENV)/.installed: | build
	python3 -m venv $(TORCH_VENV)
	$(TORCH_VENV)/bin/python -m pip install $(TORCH_PIP)
	touch $@
bench-venv: $(TORCH_VENV)/.installed
bench: build/bench_gemm build/bench_train_step build/bench_precision build/bench_bandwidth \
       $(if $(filter file undefined,$(origin PYTHON)),$(TORCH_VENV)/.installed)
	BENCH_QUICK=$(BENCH_QUICK) $(BENCH_PY) bench/gemm.py --md build/bench_gemm.md
	BENCH_QUICK=$(BENCH_QUICK) python3 bench/train_step.py --torch-python $(BENCH_PY) --gemm-md build/bench_gemm.md
	(python3 bench/machine.py; echo; ./build/bench_precision $(if $(BENCH_QUICK),,--all); echo; python3 bench/machine.py --end) \
	    | tee build/bench_precision.md

# Hardening (tests/test_harden.c runs inside the suite): the malformed corpus once more through a
# sanitizer build of train_gpt, allocation failure at every allocation of a short run
# (tests/test_oom.c), SIGKILL during saves (tests/kill_save.sh), and the libFuzzer targets of
# tests/fuzz: make fuzz runs each 60 s, make fuzz-short 10 s (CI); tests/gen_malformed.py
# rewrites tests/malformed and the fuzz seeds.
.PHONY: fuzz fuzz-short test-kill
FUZZ_CC    ?= clang
FUZZ_FLAGS  = $(WARN) -g -O1 -fno-sanitize-recover=all -I. -Itests/fuzz

build/train_gpt_san: examples/train_gpt.c ltrain.h examples/flags.h | build
	$(CC) $(WARN) $(SANFLAGS) -I. $< -o $@ $(LDLIBS)

build/test_oom: tests/test_oom.c ltrain.h | build
	$(CC) $(WARN) $(SANFLAGS) -I. $< -o $@ $(LDLIBS)

test-kill: build/train_gpt
	sh tests/kill_save.sh

build/fuzz/lib.o: tests/fuzz/fuzz_lib.c tests/fuzz/fuzz.h ltrain.h
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,address,undefined -c $< -o $@

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h build/fuzz/lib.o
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer,address,undefined $< build/fuzz/lib.o -o $@ $(LDLIBS)

build/fuzz/replay_lib.o: tests/fuzz/fuzz_lib.c tests/fuzz/fuzz.h ltrain.h
	@mkdir -p build/fuzz
	$(CC) $(WARN) $(SANFLAGS) -I. -Itests/fuzz -c $< -o $@

build/fuzz/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h build/fuzz/replay_lib.o
	$(CC) $(WARN) $(SANFLAGS) -DFZ_STANDALONE -I. -Itests/fuzz $< build/fuzz/replay_lib.o -o $@ $(LDLIBS)

fuzz:
	sh tests/fuzz/run.sh 60

fuzz-short:
	sh tests/fuzz/run.sh 10

# Precision (bench/precision.c): ms per GPT training step (eager and compiled), the activation
# memory a compiled plan needs and peak RSS, in fp32, bf16 and fp16 (lt_set_precision), for the
# three configs of bench/precision.md, or MODEL=V,L,H,C,T,B.
.PHONY: bench-memory
bench-memory: build/train_gpt
	sh bench/memory.sh

.PHONY: bench-precision
bench-precision: build/bench_precision
	./build/bench_precision $(if $(MODEL),--model $(MODEL),--all)

build/bench_precision: bench/precision.c ltrain.h | build
	$(CC) $(WARN) $(CFLAGS) -I. $< -o $@ $(LDLIBS)

# The README's commands (tests/readme.sh): every line of its ```sh blocks, run in the repository
# root as a new user would, except `make test` itself; "readme: N passed, N failed".
.PHONY: test-readme
test-readme:
	sh tests/readme.sh

# The CUDA backend (LTRAIN_CUDA, @@CUDA): the implementation compiled by nvcc as CUDA and linked with
# cuBLAS.  Runs need an NVIDIA GPU (bench/cuda_check.sh verifies one); compiling does not.
# CUDA_GENCODE: sm_90 (H100/H200) code plus compute_90 PTX that newer GPUs compile at load time.
NVCC        ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
CUDA_GENCODE ?= -gencode arch=compute_90,code=[sm_90,compute_90]
NVCCFLAGS   ?= -O2 $(CUDA_GENCODE) -Xcompiler -Wall,-Wextra,-fopenmp
.PHONY: cuda
cuda: build/train_gpt_cuda build/test_cuda

build/train_gpt_cuda: examples/train_gpt.c ltrain.h | build
	$(NVCC) -x cu $(NVCCFLAGS) -DLTRAIN_CUDA -I. $< -o $@ -lcublas -lgomp -lm

build/test_cuda: tests/test_cuda.c tests/lt_test.h ltrain.h | build
	$(NVCC) -x cu $(NVCCFLAGS) -DLTRAIN_CUDA -I. -Itests $< -o $@ -lcublas -lgomp -lm

# Tokenizer speed (bench/tokenizer.py + bench/tokenizer.c): GPT-2 encoding MB/s of ltrain.h,
# tiktoken and HF tokenizers, 1 thread and all, alternating rounds -> bench/tokenizer.md.
# Needs ../shared/data (tinyshakespeare.txt, gpt2-bpe/) and Python with tiktoken and tokenizers.
PYTHON  ?= python3
.PHONY: bench-tokenizer
bench-tokenizer: build/bench_tokenizer
	$(PYTHON) bench/tokenizer.py

build/bench_tokenizer: bench/tokenizer.c ltrain.h | build
	$(CC) $(WARN) $(CFLAGS) -I. $< -o $@ $(LDLIBS)
