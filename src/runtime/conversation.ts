// The conversation of a task as the API shows it (GET /v1/tasks/:id/messages). Messages are written by index, so a
// replayed run rewrites nothing twice.
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

  /** How many messages the conversation holds (they are recorded by index, without gaps). */
  count(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM conversation_messages").one().n;
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
}
