// The range and bucket choices shared by Administration → Usage and the personal usage panel.

const HOUR = 3600 * 1000;
export const RANGES = { hour: HOUR, day: 24 * HOUR, week: 7 * 24 * HOUR, month: 30 * 24 * HOUR };
// The bucket each range reads best in: 60, 24, 7×24 and 30 points.
const BUCKET_OF_RANGE = { hour: "minute", day: "hour", week: "hour", month: "day" };

export function rangeStart(range, until) {
  return new Date(until.getTime() - (RANGES[range] || RANGES.day));
}

export function bucketFor(range, current) {
  return BUCKET_OF_RANGE[range] || current;
}

// datetime-local holds local time without a zone; the API wants ISO 8601 with one.
export function isoFromLocal(value) {
  if (!value) return "";
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toISOString();
}

export function localFromIso(value) {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
