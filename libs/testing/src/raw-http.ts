import { connect } from 'node:net';

export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `request` as is on a fresh TCP connection and reads one HTTP response (by Content-Length,
 * or to the end of the connection): for requests fetch would refuse to send, such as a malformed
 * request line, an unknown method, or a Content-Length the body never reaches. The connection stays
 * open, as a slow client's would, until the answer comes or `timeoutMs` passes.
 */
export function rawHttp(port: number, request: string | Buffer, timeoutMs = 5_000): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(`no complete HTTP answer within ${timeoutMs} ms: ${JSON.stringify(received.toString())}`),
      );
    }, timeoutMs);
    const finish = (reply: RawReply) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reply);
    };
    const tryParse = (ended: boolean) => {
      const text = received.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return ended && reject(new Error(`connection closed without an answer: ${text}`));
      const [statusLine, ...headerLines] = text.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      const body = received.subarray(Buffer.byteLength(text.slice(0, split + 4), 'latin1'));
      const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
      if (length !== undefined ? body.length >= length : ended) {
        finish({
          status: Number(statusLine.split(' ')[1]),
          headers,
          body: body.subarray(0, length).toString(),
        });
      }
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      tryParse(false);
    });
    socket.on('end', () => tryParse(true));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.write(request);
  });
}
