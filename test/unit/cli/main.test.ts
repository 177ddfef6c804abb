import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../src/cli/main.js';

describe('the CLI command table', () => {
  it('names and describes each command as the command itself does (they load only when run)', async () => {
    for (const entry of COMMANDS) {
      const command = await entry.load();
      expect({ name: command.name, summary: command.summary }).toEqual({ name: entry.name, summary: entry.summary });
    }
    // Loads every command's module graph, most of the program: CPU work that took over 10 s on a loaded machine.
  }, 60_000);
});
