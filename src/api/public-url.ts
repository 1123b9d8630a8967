/** `https://user:key@host/path?x#y` → `https://host/path`: a URL safe to show (no credentials, query or fragment). */
export function publicUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.search = "";
    parsed.hash = "";
    return parsed.toString().replace(/\/$/, "");
  } catch {
    return "(not a URL)";
  }
}
