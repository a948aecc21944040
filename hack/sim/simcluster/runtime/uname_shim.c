/* uname(2) as a container on a simulated node sees it: the node's kernel release.
 *
 * Preloaded (through the container's own /etc/ld.so.preload) into every
 * dynamically linked program of an unsandboxed container. It calls the real
 * system call, then replaces `release` with /proc/sys/kernel/osrelease, which
 * the runtime has bind-mounted with the node's status.nodeInfo.kernelVersion
 * in the container's mount namespace. Built by hack/sim/uname-shim.sh.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

int uname(struct utsname *buf) {
    if (syscall(SYS_uname, buf) != 0)
        return -1;
    int fd = open("/proc/sys/kernel/osrelease", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char release[sizeof buf->release];
    ssize_t n = read(fd, release, sizeof release - 1);
    close(fd);
    while (n > 0 && (release[n - 1] == '\n' || release[n - 1] == ' '))
        n--;
    if (n > 0) {
        release[n] = '\0';
        memcpy(buf->release, release, (size_t)n + 1);
    }
    return 0;
}
