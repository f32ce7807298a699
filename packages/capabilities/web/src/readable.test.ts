import { describe, expect, it } from "vitest";
import { charsetOf, classifyBody, parseMediaType } from "./body.js";
import { htmlToReadable } from "./readable.js";
import { ARTICLE_HTML } from "./test-server.js";

describe("htmlToReadable", () => {
  it("extracts an article with Readability", () => {
    const page = htmlToReadable(ARTICLE_HTML, "https://blog.example/posts/gate");
    expect(page.extraction).toBe("article");
    expect(page.title).toBe("Gatekeeping Tools for Agents");
    expect(page.byline).toBe("Ada Example");
    expect(page.markdown).toContain("[protocol notes](https://blog.example/docs/protocol)");
    expect(page.markdown).not.toContain("Privacy");
  });

  it("converts a page that is not an article (a link index) whole, minus navigation, keeping its links", () => {
    const html = `<html><head><title>Index</title></head><body>
      <nav><a href="/">Home</a></nav>
      <h1>Downloads</h1><ul><li><a href="v1.tar.gz">v1</a></li><li><a href="v2.tar.gz">v2</a></li></ul>
      <footer>© someone</footer></body></html>`;
    const page = htmlToReadable(html, "https://dl.example/releases/");
    expect(page.extraction).toBe("page");
    expect(page.title).toBe("Index");
    expect(page.markdown).toBe(
      "# Downloads\n\n-   [v1](https://dl.example/releases/v1.tar.gz)\n-   [v2](https://dl.example/releases/v2.tar.gz)",
    );
  });

  it("builds the tree like a browser: a page without <html>/<body> tags still has a body", () => {
    const page = htmlToReadable(
      "<!doctype html><title>T</title><p>Para with <a href=x>a link</a>",
      "https://x.example/d/",
    );
    expect(page.title).toBe("T");
    expect(page.markdown).toBe("Para with [a link](https://x.example/d/x)");
  });

  it("prefers <main> on a page that is not an article, and keeps a navigation-only page rather than nothing", () => {
    const withMain = htmlToReadable(
      `<body><div>sidebar junk</div><main><p>${"Main content. ".repeat(20)}</p></main></body>`,
      "https://x.example/",
    );
    expect(withMain.markdown).toContain("Main content.");
    expect(withMain.markdown).not.toContain("sidebar");
    const navOnly = htmlToReadable(`<body><nav><a href="/a">A</a></nav></body>`, "https://x.example/");
    expect(navOnly.markdown).toBe("[A](https://x.example/a)");
  });

  it("resolves links against <base href> and drops data: images and empty links", () => {
    const html = `<html><head><base href="https://cdn.example/docs/"></head><body><main>
      <p>${"Text. ".repeat(40)}<a href="guide.html">Guide</a> <a href="/x"></a>
      <img src="data:image/png;base64,AAAA" alt=""><img src="pic.png" alt="A (pic)"></p></main></body></html>`;
    const page = htmlToReadable(html, "https://site.example/page");
    expect(page.markdown).toContain("[Guide](https://cdn.example/docs/guide.html)");
    expect(page.markdown).toContain("![A (pic)](https://cdn.example/docs/pic.png)");
    expect(page.markdown).not.toContain("data:");
    expect(page.links).toEqual([{ text: "Guide", url: "https://cdn.example/docs/guide.html" }]);
  });
});

describe("classifyBody and charsetOf", () => {
  const bytes = (s: string) => new TextEncoder().encode(s);
  it.each([
    ["text/html; charset=utf-8", "<p>x</p>", "html"],
    ["application/json", "{}", "json"],
    ["application/problem+json", "{}", "json"],
    ["text/csv", "a,b", "text"],
    ["image/svg+xml", "<svg/>", "text"],
    ["application/javascript", "let a", "text"],
    ["", "<!DOCTYPE html><html></html>", "html"],
    ["application/octet-stream", "just words", "text"],
    ["image/png", "not really a png", "binary"],
    ["text/plain", "nul\u0000inside", "binary"],
  ])("%s %j is %s", (type, body, kind) => {
    expect(classifyBody(bytes(body), parseMediaType(type))).toBe(kind);
  });

  it("takes the charset from the header, then a <meta> tag, else UTF-8", () => {
    const html = bytes('<html><head><meta charset="windows-1252"></head></html>');
    expect(charsetOf(html, parseMediaType("text/html; charset=ISO-8859-2"), "html")).toBe("iso-8859-2");
    expect(charsetOf(html, parseMediaType("text/html"), "html")).toBe("windows-1252");
    expect(charsetOf(html, parseMediaType("text/html; charset=bogus"), "html")).toBe("windows-1252");
    expect(charsetOf(bytes("x"), parseMediaType("text/plain"), "text")).toBe("utf-8");
  });
});
