// A real HTTP server on 127.0.0.1 serving small pages for the browser tests (not built).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface PageServer {
  url: string;
  port: number;
  hits: Map<string, number>;
  close: () => Promise<void>;
}

const page = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

/** Pages for the tests; `privateUrl` is put into pages that try to reach a refused address. */
export async function startPageServer(privateUrl = "http://10.0.0.1/"): Promise<PageServer> {
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    const html = (status: number, body: string) => {
      res.writeHead(status, { "content-type": "text/html; charset=utf-8" });
      res.end(body);
    };
    switch (url.pathname) {
      case "/":
        return html(
          200,
          page(
            "Panel Home",
            `<h1>Welcome to the panel</h1>
             <p>This page has a few links.</p>
             <nav><a href="/search">Search page</a> <a href="/about">About</a></nav>
             <a href="/hidden" style="display:none">Hidden link</a>
             <button id="greet" onclick="document.getElementById('out').textContent='Hello, clicked!'">Greet me</button>
             <p id="out"></p>
             <span id="tap">Tap here</span>
             <script>document.getElementById("tap").addEventListener("click", () => {
               document.getElementById("out").textContent = "Tapped!";
             });</script>`,
          ),
        );
      case "/search":
        return html(
          200,
          page(
            "Search",
            `<form action="/results" method="get">
               <label for="q">Query</label> <input id="q" name="q" placeholder="Type a word">
               <label>Color <select name="color"><option>red</option><option>green</option></select></label>
               <label><input type="checkbox" name="exact"> Exact match</label>
               <button type="submit">Go</button>
             </form>`,
          ),
        );
      case "/results": {
        const q = url.searchParams.get("q") ?? "";
        const safe = q.replace(/[&<>"]/g, "");
        return html(
          200,
          page(`Results for ${safe}`, `<p>You searched for ${safe} (${url.searchParams.get("color")}).</p>`),
        );
      }
      case "/about":
        return html(200, page("About", "<p>About this test site.</p>"));
      case "/ambiguous":
        return html(
          200,
          page("Two links", `<p><a href="/about">Read more</a></p><p><a href="/search">Read more</a></p>`),
        );
      case "/popup":
        return html(200, page("Popup", `<a href="/about" target="_blank">New tab</a>`));
      case "/dialog":
        return html(200, page("Dialog", `<button onclick="alert('Hi there')">Alert</button>`));
      case "/subresource":
        // The page itself tries to reach a private address: an image and a fetch.
        return html(
          200,
          page(
            "Sneaky",
            `<p>Loading…</p><img src="${privateUrl}pixel.png" alt="pixel">
             <a href="${privateUrl}admin">Internal admin</a>
             <script>fetch(${JSON.stringify(`${privateUrl}api`)}).catch(() => {});</script>`,
          ),
        );
      case "/webrtc": {
        // WebRTC sends UDP, which an HTTP proxy never sees: a STUN request, a TURN request
        // carrying a username the page chose, and ICE checks to a candidate the page made up,
        // all to a UDP port on 127.0.0.1. The page lists the candidates it gathered.
        const port = Number(url.searchParams.get("port"));
        const fingerprint = Array(32).fill("AA").join(":");
        return html(
          200,
          page(
            "WebRTC",
            `<p id="out">gathering</p>
             <script>
               const found = [];
               setTimeout(() => { document.getElementById("out").textContent = "candidates: " + (found.length ? found.join(" | ") : "none"); }, 2500);
               const watch = (pc) => { pc.onicecandidate = (e) => { if (e.candidate) found.push(e.candidate.candidate); }; };
               (async () => {
                 const stun = new RTCPeerConnection({ iceServers: [{ urls: "stun:127.0.0.1:${port}" }] });
                 watch(stun); stun.createDataChannel("x");
                 await stun.setLocalDescription(await stun.createOffer());
                 const turn = new RTCPeerConnection({ iceServers: [{ urls: "turn:127.0.0.1:${port}?transport=udp", username: "chosen\\r\\nby the page", credential: "x" }] });
                 watch(turn); turn.createDataChannel("x");
                 await turn.setLocalDescription(await turn.createOffer());
                 const direct = new RTCPeerConnection();
                 watch(direct); direct.createDataChannel("d");
                 await direct.setLocalDescription(await direct.createOffer());
                 await direct.setRemoteDescription({ type: "answer", sdp: "v=0\\r\\no=- 1 2 IN IP4 127.0.0.1\\r\\ns=-\\r\\nt=0 0\\r\\na=group:BUNDLE 0\\r\\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel\\r\\nc=IN IP4 0.0.0.0\\r\\na=ice-ufrag:PAGEufrag\\r\\na=ice-pwd:abcdefghijklmnopqrstuvwx\\r\\na=fingerprint:sha-256 ${fingerprint}\\r\\na=setup:active\\r\\na=mid:0\\r\\na=sctp-port:5000\\r\\n" });
                 // A .local name is looked up by multicast DNS, a name the page picks.
                 direct.addIceCandidate({ candidate: "candidate:2 1 udp 2130706431 capgate-chosen-name.local ${port} typ host", sdpMid: "0" }).catch(() => {});
                 await direct.addIceCandidate({ candidate: "candidate:1 1 udp 2130706431 127.0.0.1 ${port} typ host", sdpMid: "0" });
               })().catch((e) => { document.getElementById("out").textContent = "webrtc error: " + e; });
             </script>`,
          ),
        );
      }
      case "/redirect":
        res.writeHead(302, { location: url.searchParams.get("to") ?? "/" });
        return void res.end();
      case "/missing":
        return html(404, page("Not Found", "<p>Nothing here.</p>"));
      default:
        return html(200, page("Inner", `<p>inner ${url.pathname}</p>`));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
