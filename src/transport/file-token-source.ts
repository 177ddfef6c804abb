import { readFile, stat } from 'node:fs/promises';
import { ConfigError, errorMessage } from '../errors.js';
import type { TokenSource } from './token-source.js';

/**
 * A token kept in a file that something else rotates (a Kubernetes projected volume, Vault's
 * agent). The file is looked at on every ask and read again when its size, modification
 * time or inode changed: a stat is cheap beside a connect, and a watcher would miss the
 * symlink swap Kubernetes does.
 */
export class FileTokenSource implements TokenSource {
  readonly description: string;
  private seen: { readonly key: string; readonly token: string } | undefined;

  constructor(private readonly path: string) {
    this.description = `the token file ${path}`;
  }

  async token(signal?: AbortSignal): Promise<string> {
    signal?.throwIfAborted();
    let key: string;
    try {
      const s = await stat(this.path);
      key = `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch (err) {
      throw new ConfigError([`PULSAR_TOKEN_FILE: cannot read ${this.path}: ${errorMessage(err)}`], { cause: err });
    }
    if (this.seen?.key === key) return this.seen.token;
    let text: string;
    try {
      text = await readFile(this.path, { encoding: 'utf8', ...(signal ? { signal } : {}) });
    } catch (err) {
      throw new ConfigError([`PULSAR_TOKEN_FILE: cannot read ${this.path}: ${errorMessage(err)}`], { cause: err });
    }
    const token = text.trim();
    if (token === '') throw new ConfigError([`PULSAR_TOKEN_FILE: ${this.path} is empty`]);
    this.seen = { key, token };
    return token;
  }

  close(): void {}
}
