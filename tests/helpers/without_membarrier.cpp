// without_membarrier COMMAND [ARG...]: runs COMMAND in a process where the
// membarrier system call fails with ENOSYS, as on a kernel built without it
// (a seccomp filter, inherited across exec), so that tests can see what the
// asymmetric fence does where it is unavailable.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: without_membarrier COMMAND [ARG...]\n");
        return 2;
    }
    // Every system call but membarrier is allowed. The filter does not check
    // the architecture: it runs only the tests' 64-bit programs.
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
        std::fprintf(stderr, "without_membarrier: cannot install the filter: %s\n",
                     std::strerror(errno));
        return 125;
    }
    execvp(argv[1], argv + 1);
    std::fprintf(stderr, "without_membarrier: cannot run %s: %s\n", argv[1], std::strerror(errno));
    return 127;
}
