// The Gateway API front end (issue 28; docs/gateway-api.md): GatewayClass, Gateway, HTTPRoute and
// ReferenceGrant from the store → the core's servers, locations and backends (../core/types.ts).
// Its contract, held by test/unit/architecture.test.ts: it imports the core (../core/) and the
// shared checks (../checks/), never the Ingress front end (../ingress/), which never imports it;
// nothing in the core or the checks imports it; the model's entry (../build.ts) runs it beside the
// Ingress front end.
export { translateGateways, resolveBackends, type BackendPlan, type GatewayTranslation, type LocationFactory, type TranslateInput } from './translate.js';
export { referencePermitted } from './references.js';
export { attachParent, intersectHostnames, listenerProblem } from './attachment.js';
export { gatewayAPIStatus, type Condition, type GatewayAPIStatus, type ListenerStatus, type RouteParentStatus } from './status.js';
export { gatewayFrontends, type FrontendTable, type GatewayFrontends } from './frontend-tls.js';
export { gatewayTLS, type GatewayTLS, type GatewayTLSCache, type ListenerRefProblem } from './listener-tls.js';
export { bindAddresses, withAddressConditions, type BoundAddresses, type GatewayStatusAddress } from './addresses.js';
export { backendTLS, type BackendTLS, type PolicyVerdict, type ClientCertificateProblem } from './backend-tls.js';
export { assignListenerPorts, hostKey, parseListenerPortMap, MAX_EXTRA_PORTS, type GatewayPortOptions, type ListenerPorts, type PortAssignment } from './listener-ports.js';
