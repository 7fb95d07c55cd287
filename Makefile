# ltrain.h - build the examples, the tests and the benchmarks into build/.
#   make            examples and tests
#   make train      train a small GPT on the embedded default text (DATA=file.txt for your own)
#   make test       the test suite (plain build, then the same suite under ASan+UBSan)
#   make sanitize   only the sanitizer build of the suite
#   make compile-matrix   the header under C99/C11/C++/LTRAIN_STATIC/two translation units, gcc and clang
CC      ?= cc
CFLAGS  ?= -O2 -march=native -fopenmp
WARN     = -std=c99 -Wall -Wextra -Wpedantic -Werror
LDLIBS   = -lm
SANFLAGS = -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
EXAMPLES = $(patsubst examples/%.c,build/%,$(wildcard examples/*.c))
TESTSRC  = tests/test_main.c $(wildcard tests/test_*.c) tests/lt_test.h

DATA    ?= ltrain.h
STEPS   ?= 500

.PHONY: all test sanitize compile-matrix train clean
all: $(EXAMPLES) build/test_all

build/%: examples/%.c ltrain.h | build
	$(CC) $(WARN) $(CFLAGS) -I. $< -o $@ $(LDLIBS)

build/test_all: $(TESTSRC) ltrain.h | build
	$(CC) $(WARN) $(CFLAGS) -I. -Itests tests/test_main.c -o $@ $(LDLIBS)

build/test_san: $(TESTSRC) ltrain.h | build
	$(CC) $(WARN) $(SANFLAGS) -I. -Itests tests/test_main.c -o $@ $(LDLIBS)

build:
	mkdir -p build/tmp

# The README's test command: the suite, then the compile matrix, then the suite under sanitizers.
test: build/test_all build/test_san build/train_gpt
	./build/test_all
	$(MAKE) --no-print-directory compile-matrix
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ./build/test_san

# The README's first command: a small GPT on the library's own source text (no download),
# samples before and after, a checkpoint in build/model.safetensors.
train: build/train_gpt
	./build/train_gpt --data $(DATA) --steps $(STEPS) --sample 300 --temperature 0.8 \
	    --save build/model.safetensors --log build/train.jsonl

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
