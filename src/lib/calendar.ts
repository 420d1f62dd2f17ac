// Calendar arithmetic for dates and instants as written, years 0000-9999 (docs/decisions.md#clock-range).
// `Date.UTC(99, 0, 1)` is 1999-01-01: the Date API reads years 0-99 as 1900-1999, so a day is built here with
// setUTCFullYear, which takes the year as given.

/** Epoch ms of a UTC date and time, the year as written (0099 is the year 99). Month 1-12; no range check. */
export function utcMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

/** Whether year-month-day is a day of the calendar (2026-02-30 and 2026-13-01 are not; 0000-02-29 is). */
export function isCalendarDay(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const date = new Date(utcMs(year, month, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
