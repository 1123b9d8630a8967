// Types of layers.js (plain JavaScript so that eslint.config.js can import it on Node 20).
export declare const layers: Record<string, string[]>;
export declare const layerOf: (relative: string) => string;
export declare const isTopLevelFile: (layer: string) => boolean;
export declare function restrictedImportsOf(layer: string): { regex: string; message: string }[];
