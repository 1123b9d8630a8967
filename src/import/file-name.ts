// `plumb import`: the file a live deployment's manifest is written to, NAME.yaml in --out, must be
// one every clone can check out. A manifest name (a letter, then letters, digits and '-') holds no
// separator, ':', trailing dot or space; but Windows reserves device names whatever follows them
// (CON, PRN, AUX, NUL, COM0-9, LPT0-9, any case: `aux.yaml` is AUX), and git for Windows refuses to
// check such a path out, so the whole clone fails there. Such a name is written as NAME_.yaml, which
// no other manifest name can take ('_' is not in one). Pure.

const DEVICE_NAME = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;

/** The file name for a manifest named `name`, and whether it had to differ from NAME.yaml. */
export function importFileName(name: string): { file: string; renamed: boolean } {
  return DEVICE_NAME.test(name)
    ? { file: `${name}_.yaml`, renamed: true }
    : { file: `${name}.yaml`, renamed: false };
}
