// htmlToText, WebFetch's reduction of an HTML page to readable text, run on workerd's real HTMLRewriter.
import { describe, expect, it } from "vitest";
import { htmlToText } from "../../src/tools/web-fetch.ts";

describe("htmlToText", () => {
  it("drops scripts, styles, noscript, templates and the head", async () => {
    const html = `<!doctype html>
      <html>
        <head><title>Page title</title><meta charset="utf-8"><style>body { color: red }</style></head>
        <body>
          <script>var secret = "do not show";</script>
          <style>.x { display: none }</style>
          <noscript>Please enable JavaScript</noscript>
          <template><p>template text</p></template>
          <p>Visible text</p>
          <script type="module">console.log("also hidden")</script>
        </body>
      </html>`;
    expect(await htmlToText(html)).toBe("Visible text");
  });

  it("drops an uppercase SCRIPT like a lowercase one", async () => {
    expect(await htmlToText("<SCRIPT>alert(1)</SCRIPT><P>ok</P>")).toBe("ok");
  });

  it("keeps text after a dropped element, and text between two of them", async () => {
    expect(await htmlToText("<p>before</p><script>x()</script><p>middle</p><style>a{}</style><p>after</p>")).toBe(
      "before\n\nmiddle\n\nafter",
    );
  });

  it("marks headings with one # per level, each a paragraph of its own", async () => {
    const html = "<h1>Title</h1><h2>Section</h2><h3>Sub</h3><h4>Four</h4><h5>Five</h5><h6>Six</h6><p>Body</p>";
    expect(await htmlToText(html)).toBe(
      "# Title\n\n## Section\n\n### Sub\n\n#### Four\n\n##### Five\n\n###### Six\n\nBody",
    );
  });

  it("puts list items on their own lines with a dash, each list set off by a blank line", async () => {
    const html = "<p>Steps:</p><ul><li>first</li><li>second</li></ul><ol><li>one</li><li>two</li></ol>";
    expect(await htmlToText(html)).toBe("Steps:\n\n- first\n- second\n\n- one\n- two");
  });

  it("writes links as [text](href), with entities in the href decoded", async () => {
    const html = `<p>Read <a href="https://example.com/docs?a=1&amp;b=2">the docs</a> or <a href="/relative">this</a>.</p>`;
    expect(await htmlToText(html)).toBe("Read [the docs](https://example.com/docs?a=1&b=2) or [this](/relative).");
  });

  it("keeps the text but not the target of #anchor, javascript: and href-less links", async () => {
    const html = `<p><a href="#top">Back to top</a> <a href="javascript:void(0)">Menu</a> <a name="x">Named</a> <a href="">Empty</a></p>`;
    expect(await htmlToText(html)).toBe("Back to top Menu Named Empty");
  });

  it("keeps formatting inside a link inside the brackets", async () => {
    expect(await htmlToText(`<p><a href="/x">a <b>bold</b> <em>move</em></a></p>`)).toBe("[a bold move](/x)");
  });

  it("decodes entities", async () => {
    expect(await htmlToText("<p>Tom &amp; Jerry &lt;3 &gt; it&#39;s &apos;ok&apos; &quot;q&quot;</p>")).toBe(
      `Tom & Jerry <3 > it's 'ok' "q"`,
    );
    expect(await htmlToText("<p>&#65;&#66;&#67; &#8364;5 &#128512;</p>")).toBe("ABC €5 😀");
    expect(await htmlToText("<p>a&nbsp;b&nbsp;&nbsp;&nbsp;c</p>")).toBe("a b c");
  });

  it("decodes &amp; last, so an escaped entity stays literal", async () => {
    expect(await htmlToText("<p>&amp;lt;b&amp;gt; and &amp;#39; and &amp;amp;</p>")).toBe(
      "&lt;b&gt; and &#39; and &amp;",
    );
  });

  it("does not treat escaped markup as tags", async () => {
    expect(await htmlToText("<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>")).toBe("<script>alert(1)</script>");
  });

  it("collapses runs of spaces and tabs and trims around line breaks", async () => {
    expect(await htmlToText("<p>   lots \t\t of    space   </p>")).toBe("lots of space");
    expect(await htmlToText("<div>  one  </div>  <div>  two  </div>")).toBe("one\ntwo");
  });

  it("keeps at most one blank line between blocks", async () => {
    const html = "<div><div><div><p>deep</p></div></div></div><section><article><p>next</p></article></section>";
    expect(await htmlToText(html)).toBe("deep\n\nnext");
    expect(await htmlToText("<p>a</p>\n\n\n\n\n<p>b</p>")).toBe("a\n\nb");
  });

  it("breaks lines at <br> and block elements but not inside inline ones", async () => {
    expect(await htmlToText("<p>line one<br>line two<br/>line three</p>")).toBe("line one\nline two\nline three");
    expect(await htmlToText("<p>an <b>inline</b> <i>run</i> <span>of</span> <code>words</code></p>")).toBe(
      "an inline run of words",
    );
  });

  it("does not repeat the text of nested elements", async () => {
    const html = "<div><section><article><p>Only <b>once <i>each</i></b></p></article></section></div>";
    const text = await htmlToText(html);
    expect(text).toBe("Only once each");
    for (const word of ["Only", "once", "each"]) expect(text.split(word)).toHaveLength(2);
  });

  it("reduces a small page end to end", async () => {
    const html = `<!DOCTYPE html>
<html lang="en">
<head>
  <title>Example Domain</title>
  <script>window.analytics = {};</script>
</head>
<body>
  <nav><a href="#main">Skip</a> <a href="/">Home</a></nav>
  <main id="main">
    <h1>Example   Domain</h1>
    <p>This domain is for use in illustrative examples &amp; documents.</p>
    <ul>
      <li><a href="https://www.iana.org/domains/example">More information…</a></li>
      <li>Plain item</li>
    </ul>
  </main>
  <footer>© nobody</footer>
</body>
</html>`;
    const text = await htmlToText(html);
    // Indentation and the source's line breaks may leave blank lines between blocks, never more than one.
    expect(text).not.toMatch(/\n\n\n/);
    expect(text).not.toMatch(/^[ \t]|[ \t]$/m);
    expect(text.split("\n").filter((line) => line !== "")).toEqual([
      "Skip [Home](/)",
      "# Example Domain",
      "This domain is for use in illustrative examples & documents.",
      "- [More information…](https://www.iana.org/domains/example)",
      "- Plain item",
      "© nobody",
    ]);
  });

  it("returns an empty string for a page with no text", async () => {
    expect(await htmlToText("<html><head><title>t</title></head><body><script>x()</script></body></html>")).toBe("");
    expect(await htmlToText("")).toBe("");
  });

  it("returns plain text without markup unchanged apart from whitespace", async () => {
    expect(await htmlToText("just  some\ttext")).toBe("just some text");
  });

  it("survives a self-closing foreign element and keeps the text after it", async () => {
    expect(await htmlToText("<p>before</p><svg/><p>after</p>")).toBe("before\n\nafter");
    expect(await htmlToText("<p>before</p><math/><p>after</p>")).toBe("before\n\nafter");
    expect(await htmlToText(`<p>an <svg viewBox="0 0 1 1"/> icon</p><p>after</p>`)).toBe("an icon\n\nafter");
  });

  it("keeps the body when </head> is omitted, still dropping the title", async () => {
    expect(await htmlToText("<html><head><title>x</title><body><p>Hi</p></body></html>")).toBe("Hi");
    expect(await htmlToText("<html><head><title>Page</title><meta charset=utf-8><p>Hi</p></html>")).toBe("Hi");
  });

  it("leaves an out-of-range numeric entity as written", async () => {
    expect(await htmlToText("<p>a &#99999999; b &#x110000; c &#1114112; d</p>")).toBe(
      "a &#99999999; b &#x110000; c &#1114112; d",
    );
    // The largest code point is still decoded.
    expect(await htmlToText("<p>&#x10FFFF;</p>")).toBe("\u{10ffff}");
  });

  it("drops links and headings inside svg and template along with their text", async () => {
    const html =
      `<p>a</p>` +
      `<svg><a href="/in-svg"><text>svg link</text></a><title>svg title</title></svg>` +
      `<template><h2>Template heading</h2><p><a href="/in-template">template link</a></p><li>item</li></template>` +
      `<p>b</p>`;
    const text = await htmlToText(html);
    expect(text).toBe("a\n\nb");
    expect(text).not.toContain("](");
    expect(text).not.toContain("#");
  });

  it("treats javascript: in any case as no link", async () => {
    const html = `<p><a href="JavaScript:alert(1)">one</a> <a href="  JAVASCRIPT:void(0)">two</a> <a href="jAvAsCrIpT:x">three</a></p>`;
    expect(await htmlToText(html)).toBe("one two three");
  });

  it("decodes hex and named entities and keeps unknown ones as written", async () => {
    expect(await htmlToText("<p>it&#x27;s &#X41;&#x42;&#X43;</p>")).toBe("it's ABC");
    expect(await htmlToText("<p>a &mdash; b &copy; c&hellip; it&rsquo;s</p>")).toBe("a — b © c… it’s");
    expect(await htmlToText("<p>&bogus; &notanentity; &amp;</p>")).toBe("&bogus; &notanentity; &");
  });

  it("collapses newlines and indentation to one space outside <pre> and keeps them inside", async () => {
    expect(await htmlToText("<p>one\n    two\n\n\tthree\r\n  four</p>")).toBe("one two three four");
    expect(await htmlToText("<p>x</p><pre>line 1\n    indented\n\ttabbed\n\nafter blank</pre><p>y</p>")).toBe(
      "x\n\nline 1\n    indented\n\ttabbed\n\nafter blank\n\ny",
    );
    expect(await htmlToText("<p>a&nbsp;&nbsp;&nbsp;b &nbsp; c&nbsp;\n&nbsp;d</p>")).toBe("a b c d");
    expect(await htmlToText("<pre>a&nbsp;&nbsp;b</pre>")).toBe("a  b");
  });

  it("decodes every entity in a page with more than 64 KB of text", async () => {
    // Entities are decoded on joined runs of text so that one split across HTMLRewriter text chunks is still decoded.
    // workerd hands a string body to HTMLRewriter as one chunk, so this page does not itself split an entity; it
    // checks that decoding holds over a long run (11 characters per repeat, ~110 KB).
    const count = 10_000;
    const text = await htmlToText(`<p>${"word &amp; ".repeat(count)}</p>`);
    expect(text).not.toContain("&amp;");
    expect(text.split("&")).toHaveLength(count + 1);
    expect(text).toBe("word & ".repeat(count).trim());
  });

  it("turns NUL and lone surrogate references into U+FFFD", async () => {
    expect(await htmlToText("<p>a&#xD800;b&#0;c&#57343;d</p>")).toBe("a\ufffdb\ufffdc\ufffdd");
  });
});
