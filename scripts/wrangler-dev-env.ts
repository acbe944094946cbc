// The environment Outpost runs `wrangler dev` in (npm run dev, the benchmark, the e2e tests and the crash test).
//
// wrangler 4 collects a trace of every invocation for its local explorer (X_LOCAL_OBSERVABILITY, on by default): a
// collector Worker in the same workerd, fed by a streaming tail of every request, RPC call and alarm. It took about
// 18 ms of CPU per bench task (over a quarter of the Outpost workerd's) and about 400 KiB of memory per in-flight
// task, and nothing in a deployment does it. Outpost keeps its own traces (GET /v1/tasks/:id/trace, the console,
// OpenTelemetry), so the collector is off unless the environment turns it on (X_LOCAL_OBSERVABILITY=true).
//
// At every start, miniflare also fetches the data of `request.cf` (the visitor's country, colo and so on) from
// workers.cloudflare.com (CLOUDFLARE_CF_FETCH_ENABLED, on by default): a call out of the machine, which prints an
// error stack when there is no network and waits on one that drops packets. Outpost reads nothing of `request.cf`,
// so the fetch is off (miniflare's placeholder values stand in) unless the environment turns it on.

export function wranglerDevEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...env,
    X_LOCAL_OBSERVABILITY: env.X_LOCAL_OBSERVABILITY ?? "false",
    CLOUDFLARE_CF_FETCH_ENABLED: env.CLOUDFLARE_CF_FETCH_ENABLED ?? "false",
  };
}
