import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { crc32 } from "node:zlib";

// The slice of GitHub's REST API the action uses, on loopback: a pull request's comments (list,
// create, edit), the pull request a commit merged, and one artifact's zip behind a redirect to
// storage, as GitHub serves it. Every request is recorded with the token it carried.

type Comment = { id: number; body: string };
type StubRequest = { method: string; path: string; authorization: string | undefined };

export type GitHubStub = {
  url: string;
  comments: Comment[];
  requests: StubRequest[];
  /** The artifact served for `plumb-plan-{headSha}`: one file in a zip, or none. */
  setArtifact(name: string, file: { name: string; bytes: Buffer } | null): void;
  close(): Promise<void>;
};

export async function startGitHubStub(repository: string, pr: { number: number; headSha: string }) {
  const comments: Comment[] = [];
  const requests: StubRequest[] = [];
  let artifact: { name: string; zip: Buffer } | null = null;
  let nextId = 100;
  const base = `/repos/${repository}`;
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://stub");
      requests.push({
        method: req.method ?? "",
        path: url.pathname,
        authorization: req.headers.authorization,
      });
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      const route = `${req.method} ${url.pathname}`;
      if (route === `GET ${base}/issues/${pr.number}/comments`) {
        const page = Number(url.searchParams.get("page") ?? 1);
        const size = Number(url.searchParams.get("per_page") ?? 30);
        return json(200, comments.slice((page - 1) * size, page * size));
      }
      if (route === `POST ${base}/issues/${pr.number}/comments`) {
        const comment = { id: nextId++, body: (JSON.parse(text) as { body: string }).body };
        comments.push(comment);
        return json(201, comment);
      }
      const edit = new RegExp(`^PATCH ${base}/issues/comments/(\\d+)$`).exec(route);
      const found = edit && comments.find((c) => c.id === Number(edit[1]));
      if (found) {
        found.body = (JSON.parse(text) as { body: string }).body;
        return json(200, found);
      }
      if (new RegExp(`^GET ${base}/commits/\\w+/pulls$`).test(route))
        return json(200, [{ number: pr.number, head: { sha: pr.headSha } }]);
      if (route === `GET ${base}/actions/artifacts`) {
        const listed = artifact && artifact.name === url.searchParams.get("name") ? [artifact] : [];
        return json(200, {
          total_count: listed.length,
          artifacts: listed.map((a) => ({
            name: a.name,
            expired: false,
            archive_download_url: `${stub.url}${base}/actions/artifacts/1/zip`,
          })),
        });
      }
      if (route === `GET ${base}/actions/artifacts/1/zip`)
        return res.writeHead(302, { location: `${stub.url}/storage/artifact-1.zip` }).end();
      if (route === "GET /storage/artifact-1.zip" && artifact)
        return res.writeHead(200, { "content-type": "application/zip" }).end(artifact.zip);
      json(404, { message: "Not Found" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const stub: GitHubStub = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    comments,
    requests,
    setArtifact: (name, file) => (artifact = file ? { name, zip: storedZip(file.name, file.bytes) } : null),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return stub;
}

/** A zip archive holding one file, stored (not compressed): what unzip reads as GitHub's artifact zips. */
function storedZip(name: string, bytes: Buffer): Buffer {
  const fileName = Buffer.from(name);
  const crc = crc32(bytes);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4); // version needed
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(bytes.length, 18);
  local.writeUInt32LE(bytes.length, 22);
  local.writeUInt16LE(fileName.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4); // version made by
  central.writeUInt16LE(20, 6);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(bytes.length, 20);
  central.writeUInt32LE(bytes.length, 24);
  central.writeUInt16LE(fileName.length, 28);
  central.writeUInt32LE(0o100644 * 0x10000, 38); // external attributes: a regular file
  const localSize = local.length + fileName.length + bytes.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + fileName.length, 12);
  end.writeUInt32LE(localSize, 16);
  return Buffer.concat([local, fileName, bytes, central, fileName, end]);
}
