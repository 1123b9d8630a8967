/** One deployment manifest for the controller benches; `tag` changes its image (a revision). */
export const controllerManifest = (name: string, tag: string) =>
  `apiVersion: plumb/v1\nkind: Deployment\nmetadata: { name: ${name} }\nspec:\n  source: internal_container\n  source_revision_config: { image_uri: "registry.example/${name}:${tag}" }\n`;
