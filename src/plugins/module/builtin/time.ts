import { InvalidArgumentsError } from '../../../errors.js';
import { defineTool } from '../module-tool.js';

/** The current time in an IANA time zone (argument `timezone`, default UTC). */
export function timeIn(timezone: string, now: Date): { timezone: string; iso: string; text: string } {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-CA', {
      timeZone: timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'longOffset',
    }).formatToParts(now);
  } catch {
    throw new InvalidArgumentsError(`unknown time zone ${JSON.stringify(timezone)}; use an IANA name such as Europe/Paris`);
  }
  const get = (type: string) => parts.find((part) => part.type === type)?.value ?? '';
  const offset = get('timeZoneName').replace('GMT', '') || '+00:00';
  const iso = `${get('year')}-${get('month')}-${get('day')}T${get('hour')}:${get('minute')}:${get('second')}${offset === '+00:00' ? 'Z' : offset}`;
  return { timezone, iso, text: `It is ${get('hour')}:${get('minute')} on ${get('year')}-${get('month')}-${get('day')} in ${timezone} (UTC${offset}).` };
}

export default defineTool(({ arguments: args }) => {
  const tz = typeof args['timezone'] === 'string' && args['timezone'] !== '' ? args['timezone'] : 'UTC';
  return timeIn(tz, new Date()).text;
});
