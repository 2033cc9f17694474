// The bytes of an input file, plain or gzip (told by its magic), as an
// async iterable of Buffers read a chunk at a time. A gzip member that
// inflates far beyond what real recordings do (a gzip bomb) is cut with an
// error instead of being inflated to the end.

import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';

// Real rrweb JSON inflates 5 to 30 times; past this ratio, once enough has
// been inflated to judge, the file is refused as a bomb.
export const GZIP_RATIO_MAX = 200;
const GZIP_JUDGE_AFTER_BYTES = 16 * 1024 * 1024;

async function isGzip(path) {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await handle.read(head, 0, 2, 0);
    return bytesRead === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    await handle.close();
  }
}

/** Opens `path`; returns {chunks, gzip, error()} where error() is the read
 *  or inflate error that ended the chunks early (null when none). */
export async function openInput(path) {
  const gzip = await isGzip(path);
  const raw = createReadStream(path, { highWaterMark: 256 * 1024 });
  let failure = null;
  if (!gzip) {
    const chunks = (async function* plain() {
      try {
        for await (const chunk of raw) yield chunk;
      } catch (error) {
        failure = `read error: ${error.message}`;
      }
    })();
    return { chunks, gzip, error: () => failure };
  }
  let compressed = 0;
  raw.on('data', (chunk) => { compressed += chunk.length; });
  const gunzip = createGunzip();
  raw.on('error', (error) => gunzip.destroy(error));
  raw.pipe(gunzip);
  const chunks = (async function* inflated() {
    let inflatedBytes = 0;
    try {
      for await (const chunk of gunzip) {
        inflatedBytes += chunk.length;
        if (inflatedBytes > GZIP_JUDGE_AFTER_BYTES && inflatedBytes > compressed * GZIP_RATIO_MAX) {
          failure = `gzip bomb: ${compressed} bytes inflate to more than ${inflatedBytes} (over ${GZIP_RATIO_MAX} times)`;
          break;
        }
        yield chunk;
      }
    } catch (error) {
      failure = `gzip: ${error.message}`;
    } finally {
      raw.destroy();
      gunzip.destroy();
    }
  })();
  return { chunks, gzip, error: () => failure };
}
