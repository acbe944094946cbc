// The blob store's one conformance suite, run against both implementations: R2 (the RUNS bucket the tests bind) and
// the self-hosted directory store against a real workerd disk service over a temporary directory (started by
// test/support/global-setup.ts). Whatever the code does with one, it can do with the other.
import { describe, expect, it } from "vitest";
import type { BlobStore } from "../../src/blob-store/blob-store.ts";
import { diskStore, runsStore } from "../support/runs-bucket.ts";

const STORES: [string, () => BlobStore][] = [
  ["R2", runsStore],
  ["a directory behind workerd's disk service", diskStore],
];

/** Every key under `prefix`, following the cursor. */
async function allKeys(store: BlobStore, prefix: string): Promise<{ key: string; size: number }[]> {
  const out: { key: string; size: number }[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ prefix, ...(cursor ? { cursor } : {}) });
    out.push(...page.objects);
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return out;
}

describe.each(STORES)("the blob store on %s", (_name, open) => {
  const store = open();
  const fresh = () => `blob-test/${crypto.randomUUID()}`;

  it("reads back what was put, as text, as bytes and as a stream, with its size", async () => {
    const key = `${fresh()}/notes/today.txt`;
    await store.put(key, "héllo");
    expect(await (await store.get(key))?.text()).toBe("héllo");
    const bytes = new Uint8Array([0, 255, 1, 128]);
    await store.put(`${key}.bin`, bytes);
    const binary = await store.get(`${key}.bin`);
    expect(binary?.size).toBe(4);
    expect([...new Uint8Array((await binary?.arrayBuffer()) ?? new ArrayBuffer(0))]).toEqual([0, 255, 1, 128]);
    const streamed = await store.get(key);
    expect(streamed?.size).toBe(6);
    expect(await new Response(streamed?.body).text()).toBe("héllo");
  });

  it("reads a byte range of an object, cut at the object's end", async () => {
    const key = `${fresh()}/archive.bin`;
    const bytes = new Uint8Array(2000).map((_, i) => i % 251);
    await store.put(key, bytes);
    const middle = await store.get(key, { range: { offset: 700, length: 600 } });
    expect(middle?.size).toBe(600);
    expect([...new Uint8Array((await middle?.arrayBuffer()) ?? new ArrayBuffer(0))]).toEqual([
      ...bytes.slice(700, 1300),
    ]);
    const tail = await store.get(key, { range: { offset: 1990, length: 50 } });
    expect(tail?.size).toBe(10);
    expect(await new Response(tail?.body).arrayBuffer()).toEqual(bytes.slice(1990).buffer);
    expect(await store.get(`${key}.missing`, { range: { offset: 0, length: 1 } })).toBeNull();
  });

  it("answers null for a key that was never put, and for a folder of keys", async () => {
    const prefix = fresh();
    await store.put(`${prefix}/folder/file.txt`, "x");
    expect(await store.get(`${prefix}/missing.txt`)).toBeNull();
    expect(await store.get(`${prefix}/folder`)).toBeNull();
  });

  it("replaces an object put twice", async () => {
    const key = `${fresh()}/file.json`;
    await store.put(key, '{"v":1}', { contentType: "application/json" });
    await store.put(key, '{"v":22}', { contentType: "application/json" });
    const object = await store.get(key);
    expect(object?.size).toBe(8);
    expect(await object?.text()).toBe('{"v":22}');
  });

  it("writes a stream of announced length as it is written, chunk after chunk", async () => {
    const key = `${fresh()}/streamed.tar`;
    const chunks = [new Uint8Array(70_000).fill(7), new Uint8Array(1).fill(8), new Uint8Array(300).fill(9)];
    const { readable, writable } = new FixedLengthStream(70_301);
    const writer = writable.getWriter();
    const written = (async () => {
      for (const chunk of chunks) await writer.write(chunk);
      await writer.close();
    })();
    await Promise.all([store.put(key, readable, { contentType: "application/x-tar" }), written]);
    const object = await store.get(key);
    expect(object?.size).toBe(70_301);
    const bytes = new Uint8Array((await object?.arrayBuffer()) ?? new ArrayBuffer(0));
    expect([bytes[0], bytes[69_999], bytes[70_000], bytes[70_001], bytes[70_300]]).toEqual([7, 7, 8, 9, 9]);
  });

  it("writes nothing from a stream that fails before its end", async () => {
    const key = `${fresh()}/broken.tar`;
    const { readable, writable } = new FixedLengthStream(1000);
    const writer = writable.getWriter();
    const written = (async () => {
      await writer.write(new Uint8Array(400));
      await writer.abort(new Error("the source failed"));
    })();
    const [put] = await Promise.allSettled([store.put(key, readable), written]);
    expect(put.status).toBe("rejected");
    expect(await store.get(key)).toBeNull();
  });

  it("lists the keys under a prefix in order, with their sizes, and nothing beside it", async () => {
    const prefix = fresh();
    await store.put(`${prefix}/b.txt`, "bb");
    await store.put(`${prefix}/a/deep/er.txt`, "a");
    await store.put(`${prefix}/ab.txt`, "abc");
    await store.put(`${prefix}x/not-mine.txt`, "no");
    expect(await allKeys(store, `${prefix}/`)).toEqual([
      { key: `${prefix}/a/deep/er.txt`, size: 1 },
      { key: `${prefix}/ab.txt`, size: 3 },
      { key: `${prefix}/b.txt`, size: 2 },
    ]);
    // A prefix that ends inside a name matches files and folders that start with it.
    expect((await allKeys(store, `${prefix}/a`)).map((o) => o.key)).toEqual([
      `${prefix}/a/deep/er.txt`,
      `${prefix}/ab.txt`,
    ]);
    expect(await store.list({ prefix: `${fresh()}/` })).toEqual({ objects: [], truncated: false });
  });

  it("pages a listing of more than a thousand keys with its cursor", async () => {
    const prefix = fresh();
    const keys = Array.from({ length: 1001 }, (_, i) => `${prefix}/${String(i).padStart(4, "0")}.txt`);
    for (let i = 0; i < keys.length; i += 50) {
      await Promise.all(keys.slice(i, i + 50).map((key) => store.put(key, "1")));
    }
    const first = await store.list({ prefix: `${prefix}/` });
    expect(first.objects).toHaveLength(1000);
    expect(first.truncated).toBe(true);
    const second = await store.list({ prefix: `${prefix}/`, ...(first.cursor ? { cursor: first.cursor } : {}) });
    expect(second).toEqual({ objects: [{ key: keys[1000], size: 1 }], truncated: false });
    expect([...first.objects, ...second.objects].map((o) => o.key)).toEqual(keys);
  }, 60_000);

  it("deletes one key or many, and ignores keys that do not exist", async () => {
    const prefix = fresh();
    await store.put(`${prefix}/one.txt`, "1");
    await store.put(`${prefix}/two/three.txt`, "3");
    await store.put(`${prefix}/four.txt`, "4");
    await store.delete(`${prefix}/one.txt`);
    await store.delete([`${prefix}/two/three.txt`, `${prefix}/never.txt`]);
    expect(await store.get(`${prefix}/one.txt`)).toBeNull();
    expect((await allKeys(store, `${prefix}/`)).map((o) => o.key)).toEqual([`${prefix}/four.txt`]);
  });

  it("keeps keys with dot-folders, spaces, percent signs, question marks and non-ASCII names", async () => {
    const prefix = fresh();
    const keys = [
      `${prefix}/.journal/steps/turn_1%3Amodel.json`,
      `${prefix}/files/a b?c#d.txt`,
      `${prefix}/files/résumé ✓.md`,
    ];
    for (const [i, key] of keys.entries()) await store.put(key, `content ${i}`);
    for (const [i, key] of keys.entries()) expect(await (await store.get(key))?.text()).toBe(`content ${i}`);
    expect((await allKeys(store, `${prefix}/`)).map((o) => o.key)).toEqual([...keys].sort());
  });
});

describe("the directory store", () => {
  it("refuses a key that is not a plain path (an empty, '.' or '..' part), writing nothing", async () => {
    const store = diskStore();
    const prefix = `blob-test/${crypto.randomUUID()}`;
    for (const key of [`${prefix}/../escape.txt`, `${prefix}//double.txt`, `${prefix}/./here.txt`, `${prefix}/`]) {
      await expect(store.put(key, "x")).rejects.toThrow(
        `The disk blob store cannot hold the key ${JSON.stringify(key)}`,
      );
    }
    expect(await store.list({ prefix: "blob-test/escape" })).toEqual({ objects: [], truncated: false });
    expect(await store.list({ prefix: `${prefix}/` })).toEqual({ objects: [], truncated: false });
  });
});
