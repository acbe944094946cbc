// Modules loaded on first use (just-bash, the MCP client, re2js): a Worker whose agents never use them never
// evaluates them. Once a module has loaded, its namespace is kept here and import() is not called again. In workerd
// an import() still pending when its Durable Object is reset leaves later import() calls of that module waiting
// forever in the same isolate; keeping the namespace means only a reset during the very first load can hit that.
export function lazyModule<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: T | undefined;
  return async () => {
    if (loaded === undefined) loaded = await load();
    return loaded;
  };
}
