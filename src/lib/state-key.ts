// The keys of a task's key/value state (src/tasks/task-state.ts), each with the zod schema of its value, declared once
// next to the code that owns it (as restate's KeyValueStore<TState> gives each key its type once): a reader gets the
// key's type, and a write is checked against its schema. Every key is registered here as its module loads, so a name
// has one owner (a second declaration throws), the names Outpost keeps for itself can be listed, and an agent's own
// state (runtime.state) refuses them. A leaf: zod only.
import type { z } from "zod";

/** A key of a task's state and the schema of its value. */
export interface StateKey<T> {
  readonly name: string;
  /** What a write is checked against; a read trusts what was written and does not parse. */
  readonly schema: z.ZodType<T>;
}

/** A registered name: one key, or a family of them (every name that starts with it, stateKeyFamily). */
export interface RegisteredStateKey {
  readonly name: string;
  readonly family: boolean;
  readonly schema: z.ZodType<unknown>;
}

/** Typed state, as TaskState keeps it; collaborators take the part they use (`Pick<TypedState, "get">`). */
export interface TypedState {
  get<T>(key: StateKey<T>): T | undefined;
  /** Throws, naming the key, when the value does not match its schema. */
  put<T>(key: StateKey<T>, value: T): void;
  delete(key: StateKey<unknown>): void;
}

/** Every registered name, in the order their modules loaded. */
const registry = new Map<string, RegisteredStateKey>();

/** Declares a key of a task's state; throws when its name is taken (by a key, or a family it would fall under). */
export function stateKey<T>(name: string, schema: z.ZodType<T>): StateKey<T> {
  register({ name, family: false, schema });
  return Object.freeze({ name, schema });
}

/**
 * Declares a family of keys that share a schema, one per id (a person's decision per request, `decision:<id>`): the
 * prefix is registered, so an agent's state refuses every name under it.
 */
export function stateKeyFamily<T>(prefix: string, schema: z.ZodType<T>): (id: string) => StateKey<T> {
  register({ name: prefix, family: true, schema });
  return (id) => ({ name: `${prefix}${id}`, schema });
}

/** The keys and families declared so far (every one, once the Worker's modules have loaded). */
export function registeredStateKeys(): RegisteredStateKey[] {
  return [...registry.values()];
}

/** Whether a name is a declared key or falls in a declared family: Outpost's, not an agent's to use. */
export function isRegisteredStateKey(name: string): boolean {
  for (const key of registry.values()) {
    if (key.family ? name.startsWith(key.name) : name === key.name) return true;
  }
  return false;
}

function register(key: RegisteredStateKey): void {
  if (key.name === "") throw new Error("A task state key needs a name.");
  for (const other of registry.values()) {
    const clash =
      other.name === key.name ||
      (other.family && key.name.startsWith(other.name)) ||
      (key.family && other.name.startsWith(key.name));
    if (clash) {
      throw new Error(
        `Task state key "${key.name}" is declared twice (it clashes with "${other.name}"): each key has one owner.`,
      );
    }
  }
  registry.set(key.name, key);
}
