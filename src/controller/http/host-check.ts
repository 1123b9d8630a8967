import { isIP } from "node:net";

// Which `Host:` headers the controller answers (the rest get 421). A DNS-rebinding page reaches a
// loopback or in-cluster controller through a name its attacker controls (evil.example resolving
// to 127.0.0.1): its requests carry that name. So the controller answers only names it was told
// about: the --listen host, `localhost`, the --public-url host and each --allowed-host. An IP
// literal is always answered: a page at http://10.0.0.7:9400/ is the controller's own origin, not
// a foreign one, and that is how a kubelet's probes and a Prometheus scrape address a pod.

/** `example.com:9400` → `example.com`, `[::1]:9400` → `::1`; lower case, no trailing dot. */
export function hostName(header: string): string {
  const text = header.trim().toLowerCase();
  const close = text.indexOf("]");
  let name = text;
  if (text.startsWith("[") && close > 0) name = text.slice(1, close);
  else if (text.split(":").length === 2) name = text.slice(0, text.indexOf(":"));
  return name.replace(/\.$/, "");
}

const WILDCARDS = new Set(["", "0.0.0.0", "::"]);

/** The check for one server: `listenHost` from --listen, `allowed` from --allowed-host and --public-url. */
export function createHostCheck(
  listenHost: string,
  allowed: readonly string[] = [],
): (header: string | undefined) => boolean {
  const names = new Set(["localhost", ...allowed.map(hostName)]);
  if (!WILDCARDS.has(listenHost)) names.add(hostName(listenHost));
  return (header) => {
    if (!header) return false;
    const name = hostName(header);
    return isIP(name) !== 0 || names.has(name);
  };
}

/** True for an address only this machine reaches: `localhost`, 127.0.0.0/8, `::1`. */
export function isLoopback(host: string): boolean {
  const name = host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/^::ffff:/, "");
  return name === "localhost" || name === "::1" || (isIP(name) === 4 && name.startsWith("127."));
}
