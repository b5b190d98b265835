/** Sizes as people read them: 512 bytes, 3.2 KB, 4 MB (1 KB = 1,024 bytes, as the caps are set). */

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes.toLocaleString()} byte${bytes === 1 ? '' : 's'}`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toLocaleString(undefined, { maximumFractionDigits: 1 })} KB`;
  return `${(bytes / 1024 / 1024).toLocaleString(undefined, { maximumFractionDigits: 1 })} MB`;
}
