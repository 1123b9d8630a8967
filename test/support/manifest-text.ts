// Manifest texts the end-to-end tests write: the smallest Deployment plumb applies (an
// internal_container with one image), named as asked.

/** A Deployment `name` of source internal_container, image `img/NAME:1`. */
export const containerManifest = (name: string) => `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  source: internal_container
  source_revision_config: {image_uri: "img/${name}:1"}
`;
