/**
 * A single-answer scenario's id in round `round` (from 1): `toolwire-single`, then
 * `toolwire-single-r2`... Reports pool or pair rounds by it.
 */
export function singleId(target: string, round: number): string {
  return round === 1 ? `${target}-single` : `${target}-single-r${round}`;
}

/** The scenario an id names whatever its round: `toolwire-single-r3` is `toolwire-single`. */
export function withoutRound(id: string): string {
  return id.replace(/-r\d+$/, '');
}
