/** Structured log sink: services pass their pino logger adapted to this shape; the default is silent. */
export type Log = (msg: string, extra?: object) => void;

export const silent: Log = () => {};

export function errorInfo(err: unknown): { error: string; code?: string } {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? { error: err.message, code } : { error: err.message };
  }
  return { error: String(err) };
}
