// Kubernetes RBAC as the API server's authorizer applies it, for the fake API server: a request
// is allowed when a rule of a (Cluster)Role bound to the user allows its verb on its group,
// resource (`ingresses/status` for a subresource) and name; a ClusterRoleBinding's rules hold in
// every namespace, a RoleBinding's only in its own. The refusal reads as a real server's.

export interface PolicyRule { apiGroups?: string[]; resources?: string[]; verbs: string[]; resourceNames?: string[] }
export interface Subject { kind: string; name: string; namespace?: string }
export interface RoleRef { kind: 'Role' | 'ClusterRole'; name: string }
export interface Binding { metadata: { name: string; namespace?: string }; subjects?: Subject[]; roleRef: RoleRef }
export interface Role { metadata: { name: string; namespace?: string }; rules?: PolicyRule[] }

export interface RbacObjects {
  roles: Role[];
  clusterRoles: Role[];
  roleBindings: Binding[];
  clusterRoleBindings: Binding[];
}

export interface ResourceRequest {
  verb: string;
  group: string;
  /** `ingresses`, or `ingresses/status` for the subresource. */
  resource: string;
  namespace?: string;
  name?: string;
}

/** `system:serviceaccount:<ns>:<name>` is that ServiceAccount; any other name a User. */
function subjectMatches(s: Subject, user: string): boolean {
  if (s.kind === 'ServiceAccount') return user === `system:serviceaccount:${s.namespace}:${s.name}`;
  if (s.kind === 'User') return user === s.name;
  if (s.kind === 'Group') return s.name === 'system:authenticated' || (s.name === 'system:serviceaccounts' && user.startsWith('system:serviceaccount:'));
  return false;
}

function ruleAllows(rule: PolicyRule, r: ResourceRequest): boolean {
  const has = (list: string[] | undefined, v: string) => (list ?? []).includes('*') || (list ?? []).includes(v);
  if (!has(rule.verbs, r.verb) || !has(rule.apiGroups, r.group)) return false;
  const [resource] = r.resource.split('/');
  if (!has(rule.resources, r.resource) && !(rule.resources ?? []).includes(`${resource}/*`)) return false;
  if (rule.resourceNames?.length) return r.name !== undefined && rule.resourceNames.includes(r.name);
  return true;
}

export function authorize(objects: RbacObjects, user: string, r: ResourceRequest): boolean {
  const rulesOf = (ref: RoleRef, namespace?: string): PolicyRule[] => {
    const role = ref.kind === 'ClusterRole'
      ? objects.clusterRoles.find((x) => x.metadata.name === ref.name)
      : objects.roles.find((x) => x.metadata.name === ref.name && x.metadata.namespace === namespace);
    return role?.rules ?? [];
  };
  const bound = (b: Binding) => (b.subjects ?? []).some((s) => subjectMatches(s, user));
  for (const b of objects.clusterRoleBindings) {
    if (bound(b) && rulesOf(b.roleRef).some((rule) => ruleAllows(rule, r))) return true;
  }
  if (r.namespace === undefined) return false;
  for (const b of objects.roleBindings) {
    if (b.metadata.namespace !== r.namespace || !bound(b)) continue;
    if (rulesOf(b.roleRef, b.metadata.namespace).some((rule) => ruleAllows(rule, r))) return true;
  }
  return false;
}

/** The message of a real API server's 403. */
export function forbiddenMessage(user: string, r: ResourceRequest): string {
  const [resource, sub] = r.resource.split('/');
  const what = `${resource}${r.group ? `.${r.group}` : ''}${r.name ? ` "${r.name}"` : ''}`;
  const scope = r.namespace ? `in the namespace "${r.namespace}"` : 'at the cluster scope';
  return `${what} is forbidden: User "${user}" cannot ${r.verb} resource "${resource}${sub ? `/${sub}` : ''}" in API group "${r.group}" ${scope}`;
}
