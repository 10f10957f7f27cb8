// A raw SMTP client for tests: sends one mail transaction and returns every reply code, so a test
// can assert exactly which command a server refused (RCPT TO for an unknown recipient, DATA for an
// oversized report). Deliberately no library: what goes over the wire is what the test wrote.
import net from 'node:net';

export interface SmtpTranscript {
  greeting: number;
  mailFrom: number;
  /** One code per RCPT TO, in order. */
  rcptTo: number[];
  /** 354 when the server took DATA; undefined when no recipient was accepted (DATA not sent). */
  data?: number;
  /** The answer after the message's final dot. */
  end?: number;
  /** The text of the last reply. */
  lastReply: string;
}

/** Sends `message` (CRLF or LF line ends) from the null sender `<>` (as DSNs are) to `recipients`. */
export async function sendMail(port: number, recipients: string[], message: string | Buffer, host = '127.0.0.1'): Promise<SmtpTranscript> {
  const socket = net.connect(port, host);
  socket.setTimeout(30_000, () => socket.destroy(new Error('SMTP timeout')));
  let buffer = '';
  const waiting: Array<(line: string) => void> = [];
  const replies: string[] = [];
  socket.on('data', (chunk) => {
    buffer += chunk.toString('latin1');
    let i: number;
    while ((i = buffer.indexOf('\r\n')) >= 0) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      // Multi-line replies: "250-..." continue, "250 ..." ends.
      if (/^\d{3} /.test(line) || /^\d{3}$/.test(line)) {
        const w = waiting.shift();
        if (w) w(line);
        else replies.push(line);
      }
    }
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const failed = new Promise<never>((_, reject) => socket.once('error', reject));
  const next = () => Promise.race([failed, new Promise<string>((resolve) => (replies.length ? resolve(replies.shift()!) : waiting.push(resolve)))]);
  const command = async (line: string) => {
    socket.write(`${line}\r\n`);
    return next();
  };
  const code = (reply: string) => Number(reply.slice(0, 3));

  const transcript: SmtpTranscript = { greeting: code(await next()), mailFrom: 0, rcptTo: [], lastReply: '' };
  await command('EHLO test.example');
  transcript.mailFrom = code(await command('MAIL FROM:<>'));
  for (const r of recipients) {
    const reply = await command(`RCPT TO:<${r}>`);
    transcript.rcptTo.push(code(reply));
    transcript.lastReply = reply;
  }
  if (transcript.rcptTo.some((c) => c === 250)) {
    transcript.data = code(await command('DATA'));
    if (transcript.data === 354) {
      const text = (Buffer.isBuffer(message) ? message.toString('latin1') : message).replace(/\r?\n/g, '\r\n');
      // Dot-stuffing (RFC 5321 4.5.2), then the end of data.
      const body = text.replace(/^\./gm, '..');
      socket.write(body.endsWith('\r\n') ? body : `${body}\r\n`, 'latin1');
      const reply = await command('.');
      transcript.end = code(reply);
      transcript.lastReply = reply;
    }
  }
  await command('QUIT').catch(() => undefined);
  socket.end();
  await closed;
  return transcript;
}
