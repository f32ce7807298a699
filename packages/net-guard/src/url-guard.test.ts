import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { CapgateError } from "@capgate/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardedFetch } from "./guarded-fetch.js";
import { checkUrl, classifyAddress, parseAllowHost } from "./url-guard.js";

interface TestServer {
  server: Server;
  port: number;
  hits: Array<{ method?: string; url?: string; headers: IncomingMessage["headers"] }>;
}

async function serve(
  handler: (req: IncomingMessage, res: ServerResponse, port: number) => void,
): Promise<TestServer> {
  const hits: TestServer["hits"] = [];
  let port = 0;
  const server = createServer((req, res) => {
    hits.push({ method: req.method, url: req.url, headers: req.headers });
    handler(req, res, port);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
  return { server, port, hits };
}

let a: TestServer;
let b: TestServer;

beforeAll(async () => {
  b = await serve((_req, res) => res.end("from b"));
  a = await serve((req, res, port) => {
    const u = new URL(req.url ?? "/", `http://127.0.0.1:${port}`);
    if (u.pathname === "/hello") return res.end("hello");
    if (u.pathname === "/to") {
      res.writeHead(Number(u.searchParams.get("status") ?? 302), { location: u.searchParams.get("url")! });
      return res.end();
    }
    if (u.pathname === "/loop") {
      res.writeHead(302, { location: "/loop" });
      return res.end();
    }
    if (u.pathname === "/method") return res.end(`${req.method}`);
    if (u.pathname === "/big") {
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(64 * 1024, 120);
      let sent = 0;
      const pump = () => {
        while (sent < 5 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return res.once("drain", pump);
        }
        res.end();
      };
      res.on("error", () => {});
      return pump();
    }
    if (u.pathname === "/gzip") {
      res.writeHead(200, { "content-encoding": "gzip" });
      return res.end(gzipSync(Buffer.alloc(200_000, 121)));
    }
    if (u.pathname === "/hang") return; // never answers
    res.statusCode = 404;
    res.end("nope");
  });
});

afterAll(() => {
  a.server.closeAllConnections();
  b.server.closeAllConnections();
  a.server.close();
  b.server.close();
});

async function denied(p: Promise<unknown>): Promise<CapgateError> {
  const e = await p.then(
    () => {
      throw new Error("expected a denial");
    },
    (x: unknown) => x,
  );
  expect(CapgateError.isInstance(e) && e.code).toBe("policy_denied");
  expect((e as CapgateError).property).toBe("url");
  return e as CapgateError;
}

describe("classifyAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["::1", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["fc00::1", "uniqueLocal"],
    ["fd12:3456::1", "uniqueLocal"],
    ["169.254.169.254", "linkLocal"],
    ["fe80::1", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["224.0.0.1", "multicast"],
    ["ff02::1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["192.0.2.1", "reserved"],
    ["::ffff:127.0.0.1", "ipv4Mapped(loopback)"],
    ["::ffff:7f00:1", "ipv4Mapped(loopback)"],
    ["::ffff:10.0.0.1", "ipv4Mapped(private)"],
    ["::7f00:1", "ipv4Compatible"],
    ["64:ff9b::a00:1", "rfc6052(private)"],
    ["64:ff9b::7f00:1", "rfc6052(loopback)"],
    ["2002:7f00:1::", "6to4(loopback)"],
    ["64:ff9b:1::808:808", "rfc8215"],
  ])("%s is blocked (%s)", (address, range) => {
    expect(classifyAddress(address)).toMatchObject({ public: false, range });
  });

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "64:ff9b::808:808"])(
    "%s is public",
    (address) => {
      expect(classifyAddress(address).public).toBe(true);
    },
  );
});

describe("checkUrl", () => {
  it.each([
    "http://127.0.0.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://127.1/",
    "http://0x7f.1/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::127.0.0.1]/",
    "http://[::1]:8080/",
    "http://[::]/",
    "http://0.0.0.0/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]/",
    "http://10.0.0.1/",
    "http://192.168.0.1/",
    "http://[fd00::1]/",
    "http://100.64.0.1/",
    "http://[64:ff9b::a00:1]/",
    "https://localhost/",
    "http://user:pw@127.0.0.1/",
  ])("denies %s", async (url) => {
    const e = await denied(checkUrl(url));
    expect(e.message).toMatch(/blocked/);
  });

  it.each([
    "http://localhost./",
    "http://LOCALHOST/",
    "http://LocalHost.:8080/x",
    "http://localhost.localdomain/",
    "http://app.localhost/",
    "http://a.b.localhost./",
    "http://localhost6/",
    "http://ip6-localhost/",
  ])("treats %s as loopback without a DNS lookup", async (url) => {
    const asked: string[] = [];
    // A resolver that would call it public: it must not even be asked.
    const resolve = async (name: string) => {
      asked.push(name);
      return [{ address: "93.184.216.34", family: 4 as const }];
    };
    const e = await denied(checkUrl(url, { resolve }));
    expect(e.message).toMatch(/names this machine \(127\.0\.0\.1, loopback; not looked up\)/);
    expect(asked).toEqual([]);
  });

  it("a trailing dot does not change a host: allow-listed either way, public names still resolve", async () => {
    const resolve = async () => [{ address: "93.184.216.34", family: 4 as const }];
    expect((await checkUrl("http://localhost.:3000/", { allowHosts: ["localhost:3000"] })).allowListed).toBe(
      true,
    );
    expect((await checkUrl("http://localhost:3000/", { allowHosts: ["localhost.:3000"] })).allowListed).toBe(
      true,
    );
    const checked = await checkUrl("http://localhost.:3000/", { allowHosts: ["localhost:3000"] });
    expect(checked.addresses.map((a) => a.address)).toEqual(["127.0.0.1", "::1"]);
    expect((await checkUrl("http://example.com./", { resolve })).hostname).toBe("example.com");
    // Not a loopback name: only the label "localhost" itself, or names under it.
    expect((await checkUrl("http://notlocalhost/", { resolve })).allowListed).toBe(false);
    expect((await checkUrl("http://localhost.example.com/", { resolve })).hostname).toBe(
      "localhost.example.com",
    );
  });

  it("names a non-canonical spelling and the address it is", async () => {
    const e = await denied(checkUrl("http://2130706433:81/x"));
    expect(e.message).toContain("'127.0.0.1' (written '2130706433') is loopback");
    expect(e.message).toContain('"127.0.0.1:81"');
  });

  it.each([
    "file:///etc/passwd",
    "ftp://example.com/x",
    "data:text/plain,hi",
    "gopher://example.com/",
    "javascript:alert(1)",
    "ws://example.com/",
  ])("denies the scheme of %s", async (url) => {
    expect((await denied(checkUrl(url))).message).toMatch(/only http and https/);
  });

  it("denies text that is not a URL", async () => {
    expect((await denied(checkUrl("not a url"))).message).toMatch(/not a valid absolute URL/);
  });

  it("checks every resolved address, not just the first", async () => {
    const resolve = async () => [
      { address: "93.184.216.34", family: 4 as const },
      { address: "10.0.0.7", family: 4 as const },
    ];
    expect((await denied(checkUrl("http://mixed.example/", { resolve }))).message).toContain(
      "resolves to 10.0.0.7 (private)",
    );
  });

  it("lets public addresses through without connecting", async () => {
    const checked = await checkUrl("https://8.8.8.8/dns");
    expect(checked).toMatchObject({ hostname: "8.8.8.8", port: 443, allowListed: false });
  });

  it("suggests the allowHosts entry that lets the refused URL through, IPv6 in brackets", async () => {
    for (const [url, entry] of [
      ["http://127.0.0.1:3000/", "127.0.0.1:3000"],
      ["http://[::1]:8080/", "[::1]:8080"],
      ["http://[::1]:18083/", "[::1]:18083"],
      ["https://[fd00::2]/", "[fd00::2]:443"],
      ["http://localhost/", "localhost:80"],
    ] as const) {
      const error = await checkUrl(url).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(error?.message, url).toContain(`Add "${entry}" to the web policy's allowHosts`);
      // Following the advice works, and allows that port only.
      expect((await checkUrl(url, { allowHosts: [entry] })).allowListed, url).toBe(true);
    }
    // `::1:8080` would have been another address on every port, not ::1 on port 8080.
    await denied(checkUrl("http://[::1]:8080/", { allowHosts: ["[::1]:8081"] }));
  });

  it("allowHosts: host:port exact, bare host any port, canonicalised", async () => {
    expect((await checkUrl("http://127.0.0.1:3000/", { allowHosts: ["127.0.0.1:3000"] })).allowListed).toBe(
      true,
    );
    await denied(checkUrl("http://127.0.0.1:3001/", { allowHosts: ["127.0.0.1:3000"] }));
    expect((await checkUrl("http://127.0.0.1:9/", { allowHosts: ["127.0.0.1"] })).allowListed).toBe(true);
    expect((await checkUrl("http://2130706433:3000/", { allowHosts: ["127.0.0.1:3000"] })).allowListed).toBe(
      true,
    );
    expect((await checkUrl("http://[::1]:8080/", { allowHosts: ["::1"] })).allowListed).toBe(true);
    expect((await checkUrl("http://localhost:5173/", { allowHosts: ["LOCALHOST:5173"] })).allowListed).toBe(
      true,
    );
    expect(() => parseAllowHost("http://x/y")).toThrow(/not a URL/);
  });
});

describe("guardedFetch", () => {
  const allow = () => [`127.0.0.1:${a.port}`];

  it("fetches from a server reachable only through allowHosts", async () => {
    const before = a.hits.length;
    await denied(guardedFetch(`http://127.0.0.1:${a.port}/hello`));
    expect(a.hits.length).toBe(before); // refused before connecting
    const r = await guardedFetch(`http://127.0.0.1:${a.port}/hello`, { allowHosts: allow() });
    expect(r).toMatchObject({ status: 200, truncated: false, finalUrl: `http://127.0.0.1:${a.port}/hello` });
    expect(new TextDecoder().decode(r.body)).toBe("hello");
  });

  it("re-checks every redirect hop and refuses one to a private address", async () => {
    const hitsB = b.hits.length;
    for (const target of [
      `http://127.0.0.1:${b.port}/`,
      `http://localhost:${b.port}/`,
      `http://[::ffff:127.0.0.1]:${b.port}/`,
      `http://2130706433:${b.port}/`,
      "file:///etc/passwd",
    ]) {
      const e = await denied(
        guardedFetch(`http://127.0.0.1:${a.port}/to?url=${encodeURIComponent(target)}`, {
          allowHosts: allow(),
        }),
      );
      expect(e.message).toMatch(/^redirect to .* refused/);
    }
    expect(b.hits.length).toBe(hitsB);
  });

  it("follows allowed redirects, converting 303 to GET and dropping credentials across origins", async () => {
    const target = `http://127.0.0.1:${b.port}/`;
    const r = await guardedFetch(
      `http://127.0.0.1:${a.port}/to?status=303&url=${encodeURIComponent(target)}`,
      {
        method: "POST",
        body: "x=1",
        headers: { Authorization: "Bearer secret" },
        allowHosts: ["127.0.0.1"],
      },
    );
    expect(new TextDecoder().decode(r.body)).toBe("from b");
    expect(r.redirects).toEqual([target]);
    const last = b.hits.at(-1)!;
    expect(last.method).toBe("GET");
    expect(last.headers.authorization).toBeUndefined();
    const same = await guardedFetch(`http://127.0.0.1:${a.port}/to?status=307&url=/method`, {
      method: "PUT",
      allowHosts: allow(),
    });
    expect(new TextDecoder().decode(same.body)).toBe("PUT");
  });

  it("stops after maxRedirects", async () => {
    const e = await guardedFetch(`http://127.0.0.1:${a.port}/loop`, {
      allowHosts: allow(),
      maxRedirects: 3,
    }).catch((x: unknown) => x);
    expect(CapgateError.isInstance(e) && e.code).toBe("too_many_redirects");
  });

  it("caps the body and marks it truncated", async () => {
    const r = await guardedFetch(`http://127.0.0.1:${a.port}/big`, { allowHosts: allow(), maxBytes: 1000 });
    expect(r.truncated).toBe(true);
    expect(r.body.length).toBe(1000);
    const z = await guardedFetch(`http://127.0.0.1:${a.port}/gzip`, { allowHosts: allow(), maxBytes: 5000 });
    expect(z).toMatchObject({ truncated: true });
    expect(z.body.length).toBe(5000);
    expect(z.body[0]).toBe(121);
  });

  it("has a total timeout", async () => {
    const e = await guardedFetch(`http://127.0.0.1:${a.port}/hang`, {
      allowHosts: allow(),
      timeoutMs: 300,
    }).catch((x: unknown) => x);
    expect(CapgateError.isInstance(e) && e.code).toBe("timeout");
  });

  it("connects to the address that was checked, never resolving again", async () => {
    let calls = 0;
    const resolve = async () => {
      calls++;
      return [{ address: "127.0.0.1", family: 4 as const }];
    };
    // 'rebind.test' does not exist in DNS: the request can only succeed through the pinned address.
    const r = await guardedFetch(`http://rebind.test:${a.port}/hello`, {
      resolve,
      allowHosts: [`rebind.test:${a.port}`],
    });
    expect(new TextDecoder().decode(r.body)).toBe("hello");
    expect(calls).toBe(1);
    expect(a.hits.at(-1)!.headers.host).toBe(`rebind.test:${a.port}`);
    // The same host resolving to loopback without the allow-list is refused.
    await denied(guardedFetch(`http://rebind.test:${a.port}/hello`, { resolve }));
  });
});
