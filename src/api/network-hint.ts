// What a failure with no HTTP answer means, by the system code under fetch's "fetch failed". Every
// one said "could not reach URL; is the server running?", the only true advice for ECONNREFUSED:
// a host name that does not resolve sent users to restart a server that was up. Each names the
// origin (never a path or the key) and keeps "check PLUMB_API_URL", which withSettingHints replaces
// with the Environment setting that supplied the URL.

/** The codes of a TLS handshake that failed on the server's certificate. */
const CERTIFICATE_CODES = new Set([
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

const hostOf = (origin: string): string => (URL.canParse(origin) ? new URL(origin).hostname : origin);

/** The hint for a `network` failure at `origin` (scheme, host and port) with this code. */
export function networkHint(code: string | undefined, origin: string): string {
  switch (code) {
    case "ENOTFOUND":
      return `the host name ${hostOf(origin)} does not resolve: a typo, or a name known only inside another network or VPN; nothing was sent; check PLUMB_API_URL`;
    case "EAI_AGAIN":
      return `the host name ${hostOf(origin)} could not be resolved now: the DNS server did not answer; nothing was sent; check the network's DNS and try again, or check PLUMB_API_URL`;
    case "ECONNREFUSED":
      return `nothing accepts connections at ${origin}: the host refused the port; check that the server is running there, or check PLUMB_API_URL`;
    case "ETIMEDOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
      return `no connection to ${origin} could be opened in time: a firewall dropping packets, or an address not reachable from here; check PLUMB_API_URL and the network path to it`;
    case "ECONNRESET":
    case "EPIPE":
    case "UND_ERR_SOCKET":
      return `the connection to ${origin} was closed before an answer: a proxy, a load balancer or the server restarting; a write may have been carried out; try again, or check PLUMB_API_URL if it keeps happening`;
    case "EPROTO":
    case "ERR_SSL_WRONG_VERSION_NUMBER":
      return `the TLS handshake with ${origin} failed: what answers there does not speak TLS, an http:// server behind an https:// URL? check PLUMB_API_URL`;
    default:
      if (code !== undefined && CERTIFICATE_CODES.has(code))
        return `the TLS certificate of ${origin} is not trusted: expired, self-signed, from an unknown CA, or for another host name; check the host in PLUMB_API_URL, or set NODE_EXTRA_CA_CERTS to a private CA's certificate`;
      return `could not reach ${origin}; check PLUMB_API_URL and that the server is reachable from here`;
  }
}
