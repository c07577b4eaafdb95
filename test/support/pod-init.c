// The last step of runc's init, for test/support/pod.ts: the process state the kubelet (through
// containerd and runc) gives a container before it execs the entrypoint. First the root
// filesystem is remounted without nosuid, as runc mounts it (bubblewrap mounts everything nosuid,
// and on a nosuid mount the kernel ignores file capabilities). Then, in runc's order:
// no_new_privs, the bounding set reduced to the capabilities the securityContext keeps, keep-caps
// across the switch to the pod's uid/gid/groups, then the effective and permitted sets exactly
// those capabilities, inheritable and ambient empty (Kubernetes sets none), then execve.
// Usage: pod-init UID GID GROUPS CAPS NNP [NAME=VALUE...] -- PROGRAM ARGS...
//   GROUPS and CAPS are comma-separated (capability numbers), "-" for none; NNP is 0 or 1; with
//   NAME=VALUE arguments the program gets exactly that environment (as `runc exec` gives a hook
//   the container's), else this one's.
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void die(const char *what) {
  fprintf(stderr, "pod-init: %s: %s\n", what, strerror(errno));
  exit(126);
}

int main(int argc, char **argv) {
  int dashes = 6;
  while (dashes < argc && strcmp(argv[dashes], "--") != 0) dashes++;
  if (dashes + 1 >= argc) {
    fprintf(stderr, "usage: pod-init UID GID GROUPS CAPS NNP [NAME=VALUE...] -- PROGRAM ARGS...\n");
    return 125;
  }
  if (dashes > 6) {
    clearenv();
    for (int i = 6; i < dashes; i++) putenv(argv[i]);
  }
  uid_t uid = (uid_t)strtoul(argv[1], NULL, 10);
  gid_t gid = (gid_t)strtoul(argv[2], NULL, 10);
  gid_t groups[64];
  size_t ngroups = 0;
  if (strcmp(argv[3], "-") != 0) {
    for (char *g = strtok(argv[3], ","); g && ngroups < 64; g = strtok(NULL, ",")) groups[ngroups++] = (gid_t)strtoul(g, NULL, 10);
  }
  unsigned long long keep = 0;
  if (strcmp(argv[4], "-") != 0) {
    for (char *c = strtok(argv[4], ","); c; c = strtok(NULL, ",")) keep |= 1ULL << strtoul(c, NULL, 10);
  }
  int nnp = strcmp(argv[5], "1") == 0;

  if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL) != 0) die("remounting / without nosuid");
  if (nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
  for (int cap = 0; cap <= 63; cap++) {
    if (keep & (1ULL << cap)) continue;
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) die("dropping from the bounding set");
  }
  if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) die("keepcaps");
  if (setgroups(ngroups, groups) != 0) die("setgroups");
  if (setresgid(gid, gid, gid) != 0) die("setresgid");
  if (setresuid(uid, uid, uid) != 0) die("setresuid");
  if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) != 0) die("keepcaps off");
  struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  data[0].effective = data[0].permitted = (unsigned)(keep & 0xffffffffULL);
  data[1].effective = data[1].permitted = (unsigned)(keep >> 32);
  if (syscall(SYS_capset, &header, data) != 0) die("capset");
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) die("clearing the ambient set");
  execv(argv[dashes + 1], argv + dashes + 1);
  die(argv[dashes + 1]);
}
