// /nginx-ingress-controller in the image: the program ingress-nginx's manifests start (their args
// begin with it), so that swapping the image is the only change. It runs
// `node /app/bin/ingress-rx controller <the same flags>`.
//
// It also carries NET_BIND_SERVICE over to node and NGINX. Under allowPrivilegeEscalation: false
// (no_new_privs) the kernel grants a file capability only up to what the exec'ing process
// held, and a non-root process that execs a file without capabilities loses them. This file has
// cap_net_bind_service=+p: it receives the capability from tini (which has it too) and raises it
// into the ambient set, which survives the exec of node and NGINX without any file capability on
// them. +p without +e means a pod whose bounding set lacks the capability still starts (and can
// serve on ports above 1023) instead of failing with EPERM at exec.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef NODE
#define NODE "/usr/local/bin/node"
#endif
#ifndef ENTRY
#define ENTRY "/app/bin/ingress-rx"
#endif

static void carry_net_bind_service(void) {
  struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[2];
  if (syscall(SYS_capget, &header, data) != 0) return;
  const unsigned bit = 1u << CAP_NET_BIND_SERVICE; // capability 10: in the first word
  if (!(data[0].permitted & bit)) return;          // not granted to the pod: nothing to carry
  data[0].effective |= bit;
  data[0].inheritable |= bit;                      // allowed: it is in the permitted set
  if (syscall(SYS_capset, &header, data) != 0) {
    fprintf(stderr, "nginx-ingress-controller: capset: %s\n", strerror(errno));
    return;
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE, 0, 0) != 0) {
    fprintf(stderr, "nginx-ingress-controller: raising NET_BIND_SERVICE into the ambient set: %s\n", strerror(errno));
  }
}

int main(int argc, char **argv) {
  carry_net_bind_service();
  char **args = calloc((size_t)argc + 3, sizeof *args);
  if (!args) return 1;
  args[0] = NODE;
  args[1] = ENTRY;
  args[2] = "controller";
  for (int i = 1; i < argc; i++) args[i + 2] = argv[i];
  execv(NODE, args);
  fprintf(stderr, "nginx-ingress-controller: exec %s: %s\n", NODE, strerror(errno));
  return 127;
}
