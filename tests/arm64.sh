#!/bin/sh
# make test's arm64 stage: the suite cross-compiled for AArch64 and run under qemu-aarch64, so the
# header builds with -Werror off x86 and the NEON GEMM kernel (lt__uk_neon_*, @@GEMM) passes the
# same tests as the others (tests/test_gemm.c: every kernel the CPU runs, here neon and portable,
# against a double-precision loop; the op, optimizer and GPT tests on top), and clang compiles it
# for AArch64 as well.  Emulated, so it checks results, not speed.  Skipped without the cross
# compiler and qemu (apt install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user).
cd "$(dirname "$0")/.."
cc=${ARM64_CC:-aarch64-linux-gnu-gcc}
if ! command -v "$cc" > /dev/null 2>&1 || ! command -v qemu-aarch64 > /dev/null 2>&1; then
    echo "skip arm64: no $cc or qemu-aarch64 (apt install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)"
    exit 0
fi
mkdir -p build/tmp
# static: qemu-aarch64 then needs no AArch64 libraries at run time (libgomp's dlopen warning is harmless)
if ! "$cc" -std=c99 -Wall -Wextra -Wpedantic -Werror -O2 -fopenmp -static -I. -Itests tests/test_main.c \
        -o build/test_arm64 -lm > build/tmp/arm64.log 2>&1; then
    cat build/tmp/arm64.log
    echo "FAIL arm64: the suite does not build for AArch64 (log above)"
    exit 1
fi
# clang too, where it is installed (compile only: the NEON intrinsics and the rest under its -Werror)
if command -v clang > /dev/null 2>&1 && [ -d /usr/aarch64-linux-gnu/include ]; then
    if ! clang --target=aarch64-linux-gnu --sysroot=/usr/aarch64-linux-gnu -std=c99 -Wall -Wextra -Wpedantic -Werror \
            -O2 -I. -Itests -c tests/test_main.c -o build/tmp/test_arm64_clang.o > build/tmp/arm64_clang.log 2>&1; then
        cat build/tmp/arm64_clang.log
        echo "FAIL arm64: clang --target=aarch64-linux-gnu does not compile the suite (log above)"
        exit 1
    fi
    echo "ok   arm64: clang --target=aarch64-linux-gnu compiles the suite with -Werror"
fi
OMP_NUM_THREADS=2 qemu-aarch64 build/test_arm64 "$@"
