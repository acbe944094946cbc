// What every command gets: the client (the only way the CLI reaches Outpost) and the output it writes to.
import type { OutpostClient } from "../index.ts";
import type { Output } from "./output.ts";

export interface Context {
  client: OutpostClient;
  out: Output;
}
