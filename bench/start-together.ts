/**
 * The moment n runs start their measured load together: each run's own function resolves once
 * all n have called theirs. A run that fails before it gets there must still call its function
 * (it is idempotent), so that the others do not wait for it.
 */
export function startTogether(n: number): Array<() => Promise<void>> {
  let left = n;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  if (n <= 0) open();
  return Array.from({ length: n }, () => {
    let arrived = false;
    return () => {
      if (!arrived) {
        arrived = true;
        if (--left === 0) open();
      }
      return opened;
    };
  });
}
