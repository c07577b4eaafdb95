// The GATEWAY-HTTP profile of the Gateway API conformance suite, v1.6.1
// (kubernetes-sigs/gateway-api conformance/tests/*.go, pkg/features/*.go): each test's ShortName,
// its Go file, the features it requires and whether it is provisional. A test belongs to the
// profile when every feature it requires is one of the profile's: core (Gateway, HTTPRoute,
// ReferenceGrant) or the 38 extended ones below. Ported scenarios live beside this file
// (core-*.test.ts, ext-*.test.ts), each registered under `<ShortName> › …`;
// scripts/gen-gateway-conformance.ts writes docs/gateway-api.md's table from them.

export const SUITE_VERSION = 'v1.6.1';

/** The profile's core features. */
export const CORE_FEATURES = ['Gateway', 'HTTPRoute', 'ReferenceGrant'] as const;

/** The profile's extended features (Gateway, HTTPRoute and BackendTLSPolicy extended sets). */
export const EXTENDED_FEATURES = [
  'BackendTLSPolicy',
  'BackendTLSPolicySANValidation',
  'GatewayAddressEmpty',
  'GatewayBackendClientCertificate',
  'GatewayFrontendClientCertificateValidation',
  'GatewayFrontendClientCertificateValidationInsecureFallback',
  'GatewayHTTPListenerIsolation',
  'GatewayHTTPSListenerDetectMisdirectedRequests',
  'GatewayInfrastructurePropagation',
  'GatewayPort8080',
  'GatewayStaticAddresses',
  'HTTPRoute303RedirectStatusCode',
  'HTTPRoute307RedirectStatusCode',
  'HTTPRoute308RedirectStatusCode',
  'HTTPRouteBackendProtocolH2C',
  'HTTPRouteBackendProtocolWebSocket',
  'HTTPRouteBackendRequestHeaderModification',
  'HTTPRouteBackendTimeout',
  'HTTPRouteCORS',
  'HTTPRouteDestinationPortMatching',
  'HTTPRouteHostRewrite',
  'HTTPRouteMethodMatching',
  'HTTPRouteNamedRouteRule',
  'HTTPRouteParentRefPort',
  'HTTPRoutePathRedirect',
  'HTTPRoutePathRewrite',
  'HTTPRoutePortRedirect',
  'HTTPRouteQueryParamMatching',
  'HTTPRouteRequestMirror',
  'HTTPRouteRequestMultipleMirrors',
  'HTTPRouteRequestPercentageMirror',
  'HTTPRouteRequestTimeout',
  'HTTPRouteResponseHeaderModification',
  'HTTPRouteRetry',
  'HTTPRouteRetryBackendTimeout',
  'HTTPRouteRetryConnectionError',
  'HTTPRouteSchemeRedirect',
  'ListenerSet',
] as const;

export interface ConformanceTest {
  readonly shortName: string;
  /** The Go file under conformance/tests/. */
  readonly file: string;
  /** Every feature the test requires (core ones included). */
  readonly features: readonly string[];
  /** Marked Provisional upstream: run only when provisional tests are asked for. */
  readonly provisional?: true;
  /** Not in the suite: our own test, named after an extended feature the suite has no test for (OWN_TESTS). */
  readonly own?: true;
}

/**
 * Our own tests for extended features the suite (v1.6.1) defines but has no test for, each named
 * after its feature and written from the feature's definition (pkg/features) and the API's doc
 * comments. Such a feature counts when its own test is ported, as a feature with suite tests does.
 */
export const OWN_TESTS: readonly ConformanceTest[] = [
  { shortName: 'HTTPRouteRetryBackendTimeout', file: '', features: ['Gateway', 'HTTPRoute', 'HTTPRouteRetry', 'HTTPRouteRetryBackendTimeout'], own: true },
  { shortName: 'HTTPRouteRetryConnectionError', file: '', features: ['Gateway', 'HTTPRoute', 'HTTPRouteRetry', 'HTTPRouteRetryConnectionError'], own: true },
];

export const GATEWAY_HTTP_TESTS: readonly ConformanceTest[] = [
  { shortName: 'GatewayClassObservedGenerationBump', file: 'gatewayclass-observed-generation-bump.go', features: ['Gateway'] },
  { shortName: 'GatewayInvalidParametersRef', file: 'gateway-invalid-parameters-ref.go', features: ['Gateway'] },
  { shortName: 'GatewayInvalidRouteKind', file: 'gateway-invalid-route-kind.go', features: ['Gateway'] },
  { shortName: 'GatewayInvalidTLSConfiguration', file: 'gateway-invalid-tls-configuration.go', features: ['Gateway'] },
  { shortName: 'GatewayListenerUnsupportedProtocol', file: 'gateway-invalid-listeners-unsupported-protocol.go', features: ['Gateway'] },
  { shortName: 'GatewayModifyListeners', file: 'gateway-modify-listeners.go', features: ['Gateway'] },
  { shortName: 'GatewayObservedGenerationBump', file: 'gateway-observed-generation-bump.go', features: ['Gateway'] },
  { shortName: 'GatewaySecretInvalidReferenceGrant', file: 'gateway-secret-invalid-reference-grant.go', features: ['Gateway', 'ReferenceGrant'] },
  { shortName: 'GatewaySecretMissingReferenceGrant', file: 'gateway-secret-missing-reference-grant.go', features: ['Gateway', 'ReferenceGrant'] },
  { shortName: 'GatewaySecretReferenceGrantAllInNamespace', file: 'gateway-secret-reference-grant-all-in-namespace.go', features: ['Gateway', 'ReferenceGrant'] },
  { shortName: 'GatewaySecretReferenceGrantSpecific', file: 'gateway-secret-reference-grant-specific.go', features: ['Gateway', 'ReferenceGrant'] },
  { shortName: 'GatewayWithAttachedRoutes', file: 'gateway-with-attached-routes.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteCrossNamespace', file: 'httproute-cross-namespace.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteExactPathMatching', file: 'httproute-exact-path-matching.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteHTTPSListener', file: 'httproute-https-listener.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteHeaderMatching', file: 'httproute-header-matching.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteHostnameIntersection', file: 'httproute-hostname-intersection.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteInvalidBackendRefUnknownKind', file: 'httproute-invalid-backendref-unknown-kind.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteInvalidCrossNamespaceBackendRef', file: 'httproute-invalid-cross-namespace-backend-ref.go', features: ['Gateway', 'HTTPRoute', 'ReferenceGrant'] },
  { shortName: 'HTTPRouteInvalidCrossNamespaceParentRef', file: 'httproute-invalid-cross-namespace-parent-ref.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteInvalidNonExistentBackendRef', file: 'httproute-invalid-nonexistent-backendref.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteInvalidParentRefNotMatchingSectionName', file: 'httproute-invalid-parentref-not-matching-section-name.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteInvalidReferenceGrant', file: 'httproute-invalid-reference-grant.go', features: ['Gateway', 'HTTPRoute', 'ReferenceGrant'] },
  { shortName: 'HTTPRouteListenerHostnameMatching', file: 'httproute-listener-hostname-matching.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteMatching', file: 'httproute-matching.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteMatchingAcrossRoutes', file: 'httproute-matching-across-routes.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteMultipleGateways', file: 'httproute-multiple-gateways.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteNoBackendRefs', file: 'httproute-omitted-backendrefs.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteObservedGenerationBump', file: 'httproute-observed-generation-bump.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRoutePartiallyInvalidViaInvalidReferenceGrant', file: 'httproute-partially-invalid-via-invalid-reference-grant.go', features: ['Gateway', 'HTTPRoute', 'ReferenceGrant'] },
  { shortName: 'HTTPRoutePathMatchOrder', file: 'httproute-path-match-order.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteRedirectHostAndStatus', file: 'httproute-redirect-host-and-status.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteReferenceGrant', file: 'httproute-reference-grant.go', features: ['Gateway', 'HTTPRoute', 'ReferenceGrant'] },
  { shortName: 'HTTPRouteRequestHeaderModifier', file: 'httproute-request-header-modifier.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteServiceTypes', file: 'httproute-service-types.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteSimpleSameNamespace', file: 'httproute-simple-same-namespace.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'HTTPRouteWeight', file: 'httproute-weight.go', features: ['Gateway', 'HTTPRoute'] },
  { shortName: 'BackendTLSPolicy', file: 'backendtlspolicy.go', features: ['Gateway', 'HTTPRoute', 'BackendTLSPolicy'] },
  { shortName: 'BackendTLSPolicyConflictResolution', file: 'backendtlspolicy-conflict-resolution.go', features: ['Gateway', 'HTTPRoute', 'BackendTLSPolicy'] },
  { shortName: 'BackendTLSPolicyInvalidCACertificateRef', file: 'backendtlspolicy-invalid-ca-certificate-ref.go', features: ['Gateway', 'HTTPRoute', 'BackendTLSPolicy'] },
  { shortName: 'BackendTLSPolicyInvalidKind', file: 'backendtlspolicy-invalid-kind.go', features: ['Gateway', 'HTTPRoute', 'BackendTLSPolicy'] },
  { shortName: 'BackendTLSPolicyObservedGenerationBump', file: 'backendtlspolicy-observed-generation-bump.go', features: ['Gateway', 'HTTPRoute', 'BackendTLSPolicy'] },
  { shortName: 'BackendTLSPolicySANValidation', file: 'backendtlspolicy-san.go', features: ['Gateway', 'HTTPRoute', 'BackendTLSPolicy', 'BackendTLSPolicySANValidation'] },
  { shortName: 'GatewayFrontendClientCertificateValidation', file: 'gateway-with-clientcertificate-validation.go', features: ['Gateway', 'HTTPRoute', 'GatewayFrontendClientCertificateValidation'] },
  { shortName: 'GatewayFrontendClientCertificateValidationInsecureFallback', file: 'gateway-with-clientcertificate-validation-insecure-fallback.go', features: ['Gateway', 'HTTPRoute', 'GatewayFrontendClientCertificateValidation', 'GatewayFrontendClientCertificateValidationInsecureFallback'] },
  { shortName: 'GatewayFrontendInvalidDefaultClientCertificateValidation', file: 'gateway-invalid-default-frontend-client-certificate-validation.go', features: ['Gateway', 'HTTPRoute', 'GatewayFrontendClientCertificateValidation'] },
  { shortName: 'GatewayHTTPListenerIsolation', file: 'gateway-http-listener-isolation.go', features: ['Gateway', 'GatewayHTTPListenerIsolation', 'HTTPRoute'] },
  { shortName: 'GatewayInfrastructure', file: 'gateway-infrastructure.go', features: ['Gateway', 'GatewayInfrastructurePropagation'], provisional: true },
  { shortName: 'GatewayInvalidFrontendClientCertificateValidation', file: 'gateway-with-invalid-clientcertificate-validation.go', features: ['Gateway', 'HTTPRoute', 'ReferenceGrant', 'GatewayFrontendClientCertificateValidation'] },
  { shortName: 'GatewayInvalidTLSBackendConfiguration', file: 'gateway-invalid-tls-backend-configuration.go', features: ['Gateway', 'GatewayBackendClientCertificate', 'HTTPRoute', 'BackendTLSPolicy'] },
  { shortName: 'GatewayOptionalAddressValue', file: 'gateway-optional-address-value.go', features: ['Gateway', 'GatewayAddressEmpty'], provisional: true },
  { shortName: 'GatewayStaticAddresses', file: 'gateway-static-addresses.go', features: ['Gateway', 'GatewayStaticAddresses'] },
  { shortName: 'GatewayTLSBackendClientCertificate', file: 'gateway-tls-backend-client-certificate.go', features: ['Gateway', 'GatewayBackendClientCertificate', 'HTTPRoute', 'BackendTLSPolicy'] },
  { shortName: 'GatewayWithAttachedRoutesWithPort8080', file: 'gateway-with-attached-routes.go', features: ['Gateway', 'GatewayPort8080', 'HTTPRoute'] },
  { shortName: 'HTTPRoute303Redirect', file: 'httproute-303-redirect.go', features: ['Gateway', 'HTTPRoute', 'HTTPRoute303RedirectStatusCode'], provisional: true },
  { shortName: 'HTTPRoute307Redirect', file: 'httproute-307-redirect.go', features: ['Gateway', 'HTTPRoute', 'HTTPRoute307RedirectStatusCode'], provisional: true },
  { shortName: 'HTTPRoute308Redirect', file: 'httproute-308-redirect.go', features: ['Gateway', 'HTTPRoute', 'HTTPRoute308RedirectStatusCode'], provisional: true },
  { shortName: 'HTTPRouteBackendProtocolH2C', file: 'httproute-backend-protocol-h2c.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteBackendProtocolH2C'] },
  { shortName: 'HTTPRouteBackendProtocolWebSocket', file: 'httproute-backend-protocol-websocket.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteBackendProtocolWebSocket'] },
  { shortName: 'HTTPRouteBackendRequestHeaderModifier', file: 'httproute-request-header-modifier.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteBackendRequestHeaderModification'] },
  { shortName: 'HTTPRouteCORS', file: 'httproute-cors.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteCORS'] },
  { shortName: 'HTTPRouteHTTPSListenerDetectMisdirectedRequests', file: 'httproute-https-listener-detect-misdirected-requests.go', features: ['Gateway', 'GatewayHTTPSListenerDetectMisdirectedRequests', 'HTTPRoute'] },
  { shortName: 'HTTPRouteInvalidParentRefNotMatchingListenerPort', file: 'httproute-invalid-parentref-not-matching-listener-port.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteDestinationPortMatching'] },
  { shortName: 'HTTPRouteInvalidParentRefSectionNameNotMatchingPort', file: 'httproute-invalid-parentref-section-name-not-matching-port.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteParentRefPort'] },
  { shortName: 'HTTPRouteListenerPortMatching', file: 'httproute-listener-port-matching.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteParentRefPort'] },
  { shortName: 'HTTPRouteMethodMatching', file: 'httproute-method-matching.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteMethodMatching'] },
  { shortName: 'HTTPRouteNamedRule', file: 'httproute-named-rule.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteNamedRouteRule'], provisional: true },
  { shortName: 'HTTPRouteQueryParamMatching', file: 'httproute-query-param-matching.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteQueryParamMatching'] },
  { shortName: 'HTTPRouteRedirectPath', file: 'httproute-redirect-path.go', features: ['Gateway', 'HTTPRoute', 'HTTPRoutePathRedirect'] },
  { shortName: 'HTTPRouteRedirectPort', file: 'httproute-redirect-port.go', features: ['Gateway', 'HTTPRoute', 'HTTPRoutePortRedirect'] },
  { shortName: 'HTTPRouteRedirectPortAndScheme', file: 'httproute-redirect-port-and-scheme.go', features: ['Gateway', 'HTTPRoute', 'HTTPRoutePortRedirect', 'GatewayPort8080'] },
  { shortName: 'HTTPRouteRedirectScheme', file: 'httproute-redirect-scheme.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteSchemeRedirect'] },
  { shortName: 'HTTPRouteRequestHeaderModifierBackendWeights', file: 'httproute-request-header-modifier-backend-weights.go', features: ['Gateway', 'HTTPRouteBackendRequestHeaderModification', 'HTTPRoute'] },
  { shortName: 'HTTPRouteRequestMirror', file: 'httproute-request-mirror.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteRequestMirror'] },
  { shortName: 'HTTPRouteRequestMultipleMirrors', file: 'httproute-request-multiple-mirrors.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteRequestMirror', 'HTTPRouteRequestMultipleMirrors'] },
  { shortName: 'HTTPRouteRequestPercentageMirror', file: 'httproute-request-percentage-mirror.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteRequestPercentageMirror'], provisional: true },
  { shortName: 'HTTPRouteResponseHeaderModifier', file: 'httproute-response-header-modifier.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteResponseHeaderModification'] },
  { shortName: 'HTTPRouteRetry', file: 'httproute-retry.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteRetry'] },
  { shortName: 'HTTPRouteRewriteHost', file: 'httproute-rewrite-host.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteHostRewrite'] },
  { shortName: 'HTTPRouteRewritePath', file: 'httproute-rewrite-path.go', features: ['Gateway', 'HTTPRoute', 'HTTPRoutePathRewrite'] },
  { shortName: 'HTTPRouteTimeoutBackendRequest', file: 'httproute-timeout-backend-request.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteBackendTimeout'] },
  { shortName: 'HTTPRouteTimeoutRequest', file: 'httproute-timeout-request.go', features: ['Gateway', 'HTTPRoute', 'HTTPRouteRequestTimeout'] },
  { shortName: 'ListenerSetAllowedNamespaceNone', file: 'listenerset-allowed-namespace-none.go', features: ['Gateway', 'ListenerSet'] },
  { shortName: 'ListenerSetAllowedNamespaceSame', file: 'listenerset-allowed-namespace-same.go', features: ['Gateway', 'ListenerSet'] },
  { shortName: 'ListenerSetAllowedNamespaceSelector', file: 'listenerset-allowed-namespace-selector.go', features: ['Gateway', 'ListenerSet'] },
  { shortName: 'ListenerSetAllowedRoutesNamespaces', file: 'listenerset-allowed-routes-namespaces.go', features: ['Gateway', 'ListenerSet', 'HTTPRoute', 'ReferenceGrant'] },
  { shortName: 'ListenerSetDefaultNotAllowed', file: 'listenerset-default-not-allowed.go', features: ['Gateway', 'ListenerSet'] },
  { shortName: 'ListenerSetDualParentRefIndependence', file: 'listenerset-dual-parentref-independence.go', features: ['Gateway', 'ListenerSet', 'HTTPRoute'] },
  { shortName: 'ListenerSetGatewayParentSectionNameNotFound', file: 'listenerset-gateway-parent-section-name-not-found.go', features: ['Gateway', 'ListenerSet', 'HTTPRoute'] },
  { shortName: 'ListenerSetHTTPRouting', file: 'listenerset-http-routing.go', features: ['Gateway', 'ListenerSet', 'HTTPRoute'] },
  { shortName: 'ListenerSetHostnameConflict', file: 'listenerset-hostname-conflict.go', features: ['Gateway', 'ListenerSet'] },
  { shortName: 'ListenerSetProtocolConflict', file: 'listenerset-protocol-conflict.go', features: ['Gateway', 'ListenerSet'] },
  { shortName: 'ListenerSetReferenceGrant', file: 'listenerset-reference-grant.go', features: ['Gateway', 'ListenerSet', 'ReferenceGrant'] },
  { shortName: 'ListenerSetRouteStatusScopedToParentRef', file: 'listenerset-route-status-scoped-to-parentref.go', features: ['Gateway', 'ListenerSet', 'HTTPRoute'] },
];
