// The conversation of a task as the API shows it (GET /v1/tasks/:id/messages), and the task's small key/value
// state. Both are written by index or key, so a replayed run rewrites nothing twice.
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";

export interface StoredMessage {
  index: number;
  role: "user" | "assistant";
  content: MessageParam["content"];
  created_at: string;
}

export class MessageLog {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  static migrate(sql: SqlStorage): void {
    sql.exec(`CREATE TABLE IF NOT EXISTS conversation_messages (
      idx INTEGER PRIMARY KEY,
      role TEXT NOT NULL,
      content TEXT NOT NULL,
      created_at TEXT NOT NULL
    )`);
    sql.exec(`CREATE TABLE IF NOT EXISTS conversation_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
  }

  record(index: number, message: MessageParam): void {
    this.sql.exec(
      "INSERT OR IGNORE INTO conversation_messages (idx, role, content, created_at) VALUES (?, ?, ?, ?)",
      index,
      message.role,
      JSON.stringify(message.content),
      new Date().toISOString(),
    );
  }

  list(): StoredMessage[] {
    return this.sql
      .exec<{ idx: number; role: string; content: string; created_at: string }>(
        "SELECT * FROM conversation_messages ORDER BY idx",
      )
      .toArray()
      .map((row) => ({
        index: row.idx,
        role: row.role === "assistant" ? "assistant" : "user",
        content: JSON.parse(row.content) as MessageParam["content"],
        created_at: row.created_at,
      }));
  }

  getState<T>(key: string): T | undefined {
    const row = this.sql
      .exec<{ value: string }>("SELECT value FROM conversation_state WHERE key = ?", key)
      .toArray()[0];
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  putState(key: string, value: unknown): void {
    this.sql.exec(
      "INSERT INTO conversation_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      key,
      JSON.stringify(value),
    );
  }
}
