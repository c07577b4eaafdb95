// A problem with user input, as the model reports it: it names the object and the field.

export interface ModelWarning {
  /** e.g. `Ingress default/web`, `Secret default/tls`, `ConfigMap ingress/nginx`. */
  object: string;
  /** e.g. `metadata.annotations["nginx.ingress.kubernetes.io/rewrite-target"]`, `spec.tls[0]`. */
  field: string;
  message: string;
  /** The Kubernetes Event reason in controller mode; `Invalid` when absent. */
  reason?: string;
}
