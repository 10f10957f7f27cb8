/** One SQLite connection (node:sqlite, synchronous) with its prepared statements cached by SQL text. */
import { DatabaseSync, type StatementSync } from 'node:sqlite';

const MAX_STATEMENTS = 500;

export class Connection {
  readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();

  constructor(file: string, pragmas: string[]) {
    this.db = new DatabaseSync(file);
    for (const pragma of pragmas) this.db.exec(`PRAGMA ${pragma}`);
  }

  prepare(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (statement) {
      // most recently used last: the oldest go first when the cache is full
      this.statements.delete(sql);
    } else {
      statement = this.db.prepare(sql);
      if (this.statements.size >= MAX_STATEMENTS) this.statements.delete(this.statements.keys().next().value!);
    }
    this.statements.set(sql, statement);
    return statement;
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  get inTransaction(): boolean {
    return this.db.isTransaction;
  }

  /** The value of a pragma (tests and diagnostics). */
  pragma(name: string): unknown {
    const row = this.db.prepare(`PRAGMA ${name}`).get() as Record<string, unknown> | undefined;
    return row ? Object.values(row)[0] : undefined;
  }

  close(): void {
    this.statements.clear();
    this.db.close();
  }
}
