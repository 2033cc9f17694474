/* mdwe_exec: runs a program as systemd's MemoryDenyWriteExecute=yes would,
 * to measure what that costs (PCRE2's JIT cannot map executable memory,
 * so redaction runs in the interpreter).
 *
 *   mdwe_exec PROGRAM [ARGS...]
 *
 * It sets the kernel's own switch, prctl(PR_SET_MDWE,
 * PR_MDWE_REFUSE_EXEC_GAIN) (Linux 6.3+; systemd uses it where the kernel
 * has it), then execs PROGRAM: from then on no mapping may gain
 * PROT_EXEC after being writable, nor be both. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef PR_SET_MDWE
#define PR_SET_MDWE 65
#endif
#ifndef PR_MDWE_REFUSE_EXEC_GAIN
#define PR_MDWE_REFUSE_EXEC_GAIN (1UL << 0)
#endif

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: mdwe_exec PROGRAM [ARGS...]\n");
        return 2;
    }
    if (prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0L, 0L, 0L) != 0) {
        fprintf(stderr, "mdwe_exec: prctl(PR_SET_MDWE): %s (Linux 6.3 or later is needed)\n", strerror(errno));
        return 1;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "mdwe_exec: %s: %s\n", argv[1], strerror(errno));
    return 127;
}
