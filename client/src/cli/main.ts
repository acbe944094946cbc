// The `outpost` command (docs/cli.md): its commands and options (commander), the configuration every command shares,
// and the one place where failures become messages and exit codes (exit-codes.ts): an OutpostError prints the API's
// code and message, a server that cannot be reached says so, and the API key is never printed.
import { readFileSync } from "node:fs";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { createOutpostClient, OutpostError } from "../index.ts";
import { agentsCommand } from "./commands/agents.ts";
import { artifactsCommand } from "./commands/artifacts.ts";
import { chatCommand } from "./commands/chat.ts";
import { decideCommand, type Verb } from "./commands/decide.ts";
import {
  cancelCommand,
  forkCommand,
  type ReplaySource,
  replayCommand,
  runCommand,
  watchCommand,
} from "./commands/run.ts";
import {
  type CreateScheduleOptions,
  changeScheduleCommand,
  createScheduleCommand,
  listSchedulesCommand,
} from "./commands/schedules.ts";
import { type TasksOptions, tasksCommand } from "./commands/tasks.ts";
import { testCommand } from "./commands/test.ts";
import { resolveConfig } from "./config.ts";
import type { Context } from "./context.ts";
import { CliError, CommandExit, EXIT, type ExitCode } from "./exit-codes.ts";
import { createOutput, type Output } from "./output.ts";

interface GlobalOptions {
  url?: string;
  apiKey?: string;
  json?: boolean;
}

const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

/** The base URL in use, for the message when it cannot be reached. */
let target = "";

function context(command: Command): Context {
  const globals = command.optsWithGlobals<GlobalOptions>();
  const config = resolveConfig({ url: globals.url, apiKey: globals.apiKey });
  target = config.baseUrl;
  return { client: createOutpostClient(config), out: createOutput({ json: globals.json === true }) };
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `run` and `fork` follow the task they start unless told to return at once. */
const detachOption = () =>
  new Option("-d, --detach", "print the new task's id and return at once (follow it later: outpost watch)").conflicts(
    "wait",
  );
/** Following is the default; --wait says so explicitly (scripts written for the flag keep working). */
const waitOption = (description: string) => new Option("-w, --wait", description);

function nonNegativeInteger(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("Not a non-negative integer.");
  return Number(value);
}

function positiveInteger(value: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError("Not a positive integer.");
  return Number(value);
}

export function buildProgram(done: (code: ExitCode) => void): Command {
  const program = new Command("outpost")
    .description("Run and watch Outpost agents from a terminal.")
    .version(VERSION)
    .option("--url <url>", "Outpost's URL (default: $OUTPOST_URL, else http://127.0.0.1:8787, npm run dev's)")
    .option("--api-key <key>", "an API key (default: $OUTPOST_API_KEY; dev-key for a server on this machine)")
    .option("--json", "machine-readable output: one JSON document, or JSON lines for a stream")
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError()
    .exitOverride();

  program
    .command("agents")
    .description("list the agents this key may run, or show one")
    .argument("[name]", "an agent's name")
    .action(async (name: string | undefined, _options, command: Command) => {
      done(await agentsCommand(context(command), name));
    });

  program
    .command("run")
    .description("start a task and follow it live to its end (with --detach: print its id and return)")
    .argument("<agent>", "the agent to run")
    .argument("<input>", "what to ask it")
    .option("-f, --file <path>", "put a local text file in the task's workspace (repeatable)", collect)
    .option("-t, --tag <tag>", "tag the task (repeatable)", collect)
    .addOption(detachOption())
    .addOption(waitOption("follow the run live until it ends and answer what it asks (the default)"))
    .action(
      async (agent: string, input: string, options: { file?: string[]; tag?: string[]; detach?: boolean }, command) => {
        done(
          await runCommand(context(command), agent, input, {
            file: options.file ?? [],
            tag: options.tag ?? [],
            wait: options.detach !== true,
          }),
        );
      },
    );

  program
    .command("watch")
    .description("follow a task live (its whole stream, sub-agents included) until it ends")
    .argument("<task>", "the task's id")
    .option("--depth <n>", "sub-agents' events at most this many levels down", nonNegativeInteger)
    .action(async (id: string, options: { depth?: number }, command: Command) => {
      done(await watchCommand(context(command), id, options));
    });

  program
    .command("cancel")
    .description("cancel a task (at its next safe point)")
    .argument("<task>", "the task's id")
    .action(async (id: string, _options, command: Command) => {
      done(await cancelCommand(context(command), id));
    });

  program
    .command("tasks")
    .description("list the tenant's tasks, newest first")
    .option("--status <statuses>", "only these statuses (comma-separated)")
    .option("--agent <name>", "only this agent's tasks")
    .option("--workflow <name>", "only runs of this workflow")
    .option("--tag <tag>", "only tasks with this tag")
    .option("--parent <task>", "only the forks and sub-agents of this task")
    .option("--created-after <time>", "created at or after this ISO 8601 instant")
    .option("--created-before <time>", "created before this ISO 8601 instant")
    .option("--limit <n>", "at most this many (1-100, default 20)")
    .option("--cursor <cursor>", "the next page (printed after a full page)")
    .action(async (options: TasksOptions, command: Command) => {
      done(await tasksCommand(context(command), options));
    });

  const decide = (verb: Verb, description: string, answer: boolean) => {
    const command = program.command(verb).description(description).argument("<task>", "the waiting task's id");
    if (answer) command.argument("<answer>", "the answer the agent gets");
    else
      command.option("-m, --message <text>", verb === "approve" ? "a note for the model" : "why (told to the model)");
    if (verb === "approve") command.option("--input <json>", "run the call with this input instead");
    command
      .option("--request <id>", "the request id you reviewed (refused if the task waits for another by now)")
      .option("-w, --wait", "then follow the task live until it ends");
    command.action(async (id: string, ...rest: unknown[]) => {
      const cmd = rest.at(-1) as Command;
      const text = answer ? (rest[0] as string) : undefined;
      const options = cmd.opts<{ message?: string; input?: string; request?: string; wait?: boolean }>();
      done(await decideCommand(context(cmd), verb, id, text, { ...options, wait: options.wait === true }));
    });
  };
  decide("approve", "approve the tool call a task waits for", false);
  decide("reject", "reject the tool call a task waits for (or decline its question)", false);
  decide("answer", "answer the question a task's agent asks", true);

  program
    .command("chat")
    .description("talk with an agent in a session, each reply streamed")
    .argument("<agent>", "the agent to talk with")
    .action(async (agent: string, _options, command: Command) => {
      done(await chatCommand(context(command), agent));
    });

  program
    .command("fork")
    .description("start a new task from a task's checkpoint (its latest by default)")
    .argument("<task>", "the task to fork")
    .option("--checkpoint <id>", "the checkpoint to continue from")
    .option("-m, --message <text>", "a user message added to the conversation before it goes on")
    .addOption(detachOption())
    .addOption(waitOption("follow the new task live until it ends (the default)"))
    .action(async (id: string, options: { checkpoint?: string; message?: string; detach?: boolean }, command) => {
      const { checkpoint, message } = options;
      done(
        await forkCommand(context(command), id, {
          ...(checkpoint !== undefined ? { checkpoint } : {}),
          ...(message !== undefined ? { message } : {}),
          wait: options.detach !== true,
        }),
      );
    });

  program
    .command("test")
    .description("run an agent's test cases and grade them (an evaluation); exit 1 when a threshold is missed")
    .argument("<agent>", "the agent whose test_cases to run")
    .option("-c, --case <name>", "only this case, or the cases with this tag (repeatable)", collect)
    .option("-r, --repeat <n>", "runs of each case (1-10, default 1)", positiveInteger)
    .action(async (agent: string, options: { case?: string[]; repeat?: number }, command: Command) => {
      done(
        await testCommand(context(command), agent, {
          case: options.case ?? [],
          ...(options.repeat !== undefined ? { repeat: options.repeat } : {}),
        }),
      );
    });

  program
    .command("replay")
    .description(
      "run an ended task's agent again on its recorded answers (or a downloaded bundle's), then show what differs",
    )
    .argument("[task]", "the task to replay (or give --bundle)")
    .option("--bundle <file>", "replay a run bundle file (GET /v1/tasks/:id/bundle, from any deployment)")
    .option("--agent <name>", "with --bundle: replay with this agent instead of the recorded one")
    .addOption(detachOption())
    .addOption(waitOption("follow the replay live until it ends, then compare it (the default)"))
    .action(
      async (
        id: string | undefined,
        options: { bundle?: string; agent?: string; detach?: boolean },
        command: Command,
      ) => {
        if ((id === undefined) === (options.bundle === undefined)) {
          throw new CliError("usage", "Give the task to replay, or --bundle <file>, not both.", EXIT.usage);
        }
        if (options.agent !== undefined && options.bundle === undefined) {
          throw new CliError("usage", "--agent goes with --bundle.", EXIT.usage, "agent");
        }
        const source: ReplaySource =
          options.bundle !== undefined
            ? { bundle: options.bundle, ...(options.agent !== undefined ? { agent: options.agent } : {}) }
            : { task: id as string };
        done(await replayCommand(context(command), source, { wait: options.detach !== true }));
      },
    );

  const schedules = program
    .command("schedules")
    .description("the tenant's scheduled runs: list them (the default), create, pause, resume, delete")
    .option("--cursor <cursor>", "the next page (printed after a full page)")
    .action(async (options: { cursor?: string }, command: Command) => {
      done(await listSchedulesCommand(context(command), options));
    });
  schedules
    .command("create")
    .description("run an agent on a cron expression in a time zone, or once at an instant")
    .argument("<agent>", "the agent to run")
    .argument("<input>", "what each run asks it")
    .option("--cron <expression>", 'five fields, e.g. "0 9 * * 1-5"')
    .option("--timezone <zone>", "the IANA time zone the cron expression is read in (default UTC)")
    .option("--at <instant>", "one run at this ISO 8601 instant, with its offset")
    .addOption(
      new Option("--missed <policy>", "fires missed while down: one run, or none").choices(["run_once", "skip"]),
    )
    .option("-t, --tag <tag>", "tag each run (repeatable)", collect)
    .action(async (agent: string, input: string, options: CreateScheduleOptions, command: Command) => {
      done(await createScheduleCommand(context(command), agent, input, options));
    });
  for (const verb of ["pause", "resume", "delete"] as const) {
    schedules
      .command(verb)
      .description(`${verb} a schedule`)
      .argument("<schedule>", "the schedule's id")
      .action(async (id: string, _options, command: Command) => {
        done(await changeScheduleCommand(context(command), verb, id));
      });
  }

  program
    .command("artifacts")
    .description("list a task's run bundle, or download it")
    .argument("<task>", "the task's id")
    .option("-d, --download <dir>", "save every file under this folder")
    .option("--tar <file>", "save the whole bundle as one tar file (once the run has ended)")
    .action(async (id: string, options: { download?: string; tar?: string }, command: Command) => {
      done(await artifactsCommand(context(command), id, options));
    });

  return program;
}

/** Prints a failure (as text, or one JSON line with --json) and returns the exit code it means. */
function report(error: unknown, out: Output): ExitCode {
  if (error instanceof CommandExit) return error.exitCode;
  if (error instanceof CommanderError) {
    // commander has printed its message (or the help); --help and --version are not failures.
    return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  const failure = describe(error);
  if (out.json) {
    const { code, message, status, field } = failure;
    process.stderr.write(`${JSON.stringify({ error: { code, message, status, field } })}\n`);
  } else {
    const where = failure.field ? ` (${failure.field})` : "";
    out.note(`${out.styleErr("red", `error ${failure.code}`)}: ${failure.message}${where}`);
    if (failure.hint) out.note(out.styleErr("dim", failure.hint));
  }
  return failure.exitCode;
}

interface Failure {
  code: string;
  message: string;
  status?: number;
  field?: string;
  hint?: string;
  exitCode: ExitCode;
}

function describe(error: unknown): Failure {
  if (error instanceof CliError) {
    return { code: error.code, message: error.message, exitCode: error.exitCode, ...optional("field", error.field) };
  }
  if (error instanceof OutpostError) {
    const hint =
      error.status === 401
        ? "Check the API key (OUTPOST_API_KEY or --api-key)."
        : error.status === 403
          ? "This key's scopes do not allow it."
          : undefined;
    return {
      code: error.code,
      message: error.message,
      ...(error.status > 0 ? { status: error.status } : {}),
      ...optional("field", error.field),
      ...optional("hint", hint),
      exitCode: error.status === 0 ? EXIT.unreachable : EXIT.api,
    };
  }
  if (error instanceof TypeError && /fetch failed/i.test(error.message)) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return {
      code: "unreachable",
      message: `Cannot reach ${target}${cause ? ` (${cause})` : ""}.`,
      hint: "Is the server running (npm run dev)? Set OUTPOST_URL or --url.",
      exitCode: EXIT.unreachable,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: "internal", message, exitCode: EXIT.taskFailed };
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}

async function main(argv: string[]): Promise<void> {
  let code: ExitCode = EXIT.ok;
  const program = buildProgram((c) => {
    code = c;
  });
  process.on("SIGINT", () => {
    // The spinner hides the cursor: show it again on the way out.
    if (process.stderr.isTTY) process.stderr.write("\x1b[?25h\n");
    process.exit(EXIT.interrupted);
  });
  try {
    await program.parseAsync(argv);
  } catch (error) {
    code = report(error, createOutput({ json: argv.includes("--json") }));
  }
  process.exitCode = code;
}

await main(process.argv);
