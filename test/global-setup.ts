// Starts the model emulator in Node for the whole test run and hands its URL to the workerd test pool.
import type { TestProject } from "vitest/node";
import { startEmulator } from "../emulator/server.ts";

declare module "vitest" {
  export interface ProvidedContext {
    emulatorUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const emulator = await startEmulator({ quiet: true });
  project.provide("emulatorUrl", emulator.url);
  return () => emulator.close();
}
