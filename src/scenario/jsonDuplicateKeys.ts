/**
 * The keys that appear twice in one JSON object, each with the path of its object (`zero_optimization.stage`).
 * `JSON.parse` keeps the last silently; DeepSpeed loads its config with `dict_raise_error_on_duplicate_keys`
 * (deepspeed/runtime/config.py) and stops. Expects text that `JSON.parse` accepts.
 */
export function duplicateJsonKeys(text: string): string[] {
  interface Frame {
    object: boolean;
    keys: Set<string>;
    path: string;
    /** The key whose value is being read (objects), so that a nested object knows its path. */
    pending?: string;
    expectKey: boolean;
  }
  const stack: Frame[] = [];
  const found: string[] = [];
  const top = () => stack[stack.length - 1];
  const childPath = () => {
    const f = top();
    if (!f) return '';
    const name = f.object ? (f.pending ?? '') : '[]';
    return f.path === '' ? name : `${f.path}.${name}`;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const f = top();
      if (f?.object && f.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        const where = f.path === '' ? key : `${f.path}.${key}`;
        if (f.keys.has(key) && !found.includes(where)) found.push(where);
        f.keys.add(key);
        f.pending = key;
        f.expectKey = false;
      }
      i = j;
    } else if (ch === '{' || ch === '[') {
      stack.push({ object: ch === '{', keys: new Set(), path: childPath(), expectKey: ch === '{' });
    } else if (ch === '}' || ch === ']') {
      stack.pop();
    } else if (ch === ',' && top()?.object) {
      top().expectKey = true;
    }
  }
  return found;
}
