import { describe, expect, it } from "vitest";
import { brief, check, checkFiles, yaml } from "../helpers.js";

const GITREPO = yaml`
apiVersion: plumb/v1
kind: Deployment
metadata:
  name: support-agent
spec:
  source: gitrepo
  source_config:
    integration_id: 20000000-0000-4000-8000-000000000001
    repo_url: https://github.com/acme/support-agent
    deployment_type: prod
    build_on_push: true
  source_revision_config:
    repo_ref: main
    graph_config_path: langgraph.json
  secrets:
    - name: OPENAI_API_KEY
      valueFrom: {env: OPENAI_API_KEY}
`;

describe("a valid manifest", () => {
  it("has no problems and is returned with its positions", () => {
    const { problems, manifests } = check(GITREPO);
    expect(problems).toEqual([]);
    expect(manifests).toHaveLength(1);
    expect(manifests[0]!.location).toEqual({ file: "m.yaml", line: 2, column: 1 });
    expect(manifests[0]!.locate(["spec", "source_config", "build_on_push"])).toEqual({
      file: "m.yaml",
      line: 11,
      column: 5,
    });
    // An absent field points at its nearest existing ancestor.
    expect(manifests[0]!.locate(["spec", "source_config", "custom_url"]).line).toBe(7);
  });
});

describe("schema problems", () => {
  it("unknown field with a did-you-mean suggestion, at the key", () => {
    const { problems, manifests } = check(GITREPO.replace("    repo_url:", "    repo_ulr:"));
    expect(brief(problems)).toEqual(["9:5 error unknown-field"]);
    expect(problems[0]!.message).toBe(
      'unknown field "repo_ulr" in spec.source_config (did you mean "repo_url"?)',
    );
    expect(problems[0]!.field).toBe("spec.source_config.repo_ulr");
    expect(manifests).toEqual([]);
  });

  it("no suggestion when nothing is close", () => {
    const { problems } = check(GITREPO.replace("  source: gitrepo", "  source: gitrepo\n  zzzzzzzzzz: 1"));
    expect(problems[0]!.message).toBe('unknown field "zzzzzzzzzz" in spec');
  });

  it("missing required field, at the parent key", () => {
    const { problems } = check(GITREPO.replace("  name: support-agent", "  labels: {a: b}"));
    expect(brief(problems)).toEqual(["3:1 error missing-field"]);
    expect(problems[0]!.field).toBe("metadata.name");
  });

  it("wrong type, at the value", () => {
    const { problems } = check(GITREPO.replace("build_on_push: true", "build_on_push: yes please"));
    expect(brief(problems)).toEqual(["11:20 error invalid-type"]);
    expect(problems[0]!.message).toBe(
      "spec.source_config.build_on_push must be a boolean or null, not a string",
    );
  });

  it("enum value with a suggestion", () => {
    const { problems } = check(GITREPO.replace("deployment_type: prod", "deployment_type: prd"));
    expect(brief(problems)).toEqual(["10:22 error invalid-value"]);
    expect(problems[0]!.message).toContain('(did you mean "prod"?)');
  });

  it("deployment name, secret name and UUID formats", () => {
    const text = GITREPO.replace("name: support-agent", "name: support_agent")
      .replace("- name: OPENAI_API_KEY", "- name: openai-key")
      .replace("integration_id: 20000000-0000-4000-8000-000000000001", "integration_id: abc");
    expect(brief(check(text).problems)).toEqual([
      "4:9 error invalid-name",
      "8:21 error invalid-format",
      "16:13 error invalid-name",
    ]);
  });

  it("valueFrom must be {env} or {file}", () => {
    const { problems } = check(GITREPO.replace("valueFrom: {env: OPENAI_API_KEY}", "valueFrom: {url: x}"));
    expect(brief(problems)).toEqual(["17:18 error invalid-value"]);
    const lower = check(GITREPO.replace("valueFrom: {env: OPENAI_API_KEY}", "valueFrom: {env: lower-case}"));
    expect(brief(lower.problems)).toEqual(["17:24 error invalid-name"]);
  });

  it("unknown kind with suggestion, and a missing kind", () => {
    const { problems } = check(GITREPO.replace("kind: Deployment", "kind: Deploymnet"));
    expect(brief(problems)).toEqual(["2:7 error unknown-kind"]);
    expect(problems[0]!.message).toContain('did you mean "Deployment"');
    expect(brief(check("apiVersion: plumb/v1\nmetadata: {name: a}\n").problems)).toEqual([
      "1:1 error unknown-kind",
    ]);
  });
});

describe("source applicability", () => {
  it("external_container fields on gitrepo", () => {
    const text = GITREPO.replace(
      "    build_on_push: true",
      "    build_on_push: true\n    listener_id: 10000000-0000-4000-8000-000000000001\n    resource_spec: {cpu: 1}",
    ).replace("  secrets:", "  secret_references: [{name: A, secret_name: s, secret_key: k}]\n  secrets:");
    const { problems } = check(text);
    expect(brief(problems)).toEqual([
      "12:5 error field-not-applicable",
      "13:5 error field-not-applicable",
      "17:3 error field-not-applicable",
    ]);
    expect(problems.map((p) => p.field)).toEqual([
      "spec.source_config.listener_id",
      "spec.source_config.resource_spec",
      "spec.secret_references",
    ]);
  });

  const CONTAINER = yaml`
apiVersion: plumb/v1
kind: Deployment
metadata: {name: ops}
spec:
  source: external_container
  source_config:
    listener_id: 10000000-0000-4000-8000-000000000001
    repo_url: https://example.com/x
    install_command: npm ci
  source_revision_config:
    image_uri: registry.example/ops:1
    repo_ref: main
    graph_config_path: langgraph.json
`;

  it("gitrepo fields and graph_config_path on external_container; JS-only fields as a warning", () => {
    const { problems, manifests } = check(CONTAINER);
    expect(brief(problems)).toEqual([
      "8:5 error field-not-applicable",
      "9:5 warning js-only-field",
      "12:5 error field-not-applicable",
      "13:5 error field-not-applicable",
    ]);
    expect(manifests).toEqual([]);
  });

  it("warnings alone keep the manifest valid", () => {
    const text = CONTAINER.replace(/ {4}repo_url.*\n/, "").replace(/ {4}repo_ref.*\n {4}graph.*\n/, "");
    const { problems, manifests } = check(text);
    expect(brief(problems)).toEqual(["8:5 warning js-only-field"]);
    expect(manifests).toHaveLength(1);
  });

  it("graph_config_path is required for gitrepo and internal_source", () => {
    expect(brief(check(GITREPO.replace(/ {4}graph_config_path.*\n/, "")).problems)).toEqual([
      "12:3 error graph-config-path-required",
    ]);
    const source =
      "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  source: internal_source\n  source_path: app\n";
    expect(brief(check(source).problems)).toEqual(["5:3 error graph-config-path-required"]);
  });

  it("image_uri does not apply to a buildable source unless revision_source is a container", () => {
    const text = GITREPO.replace("    repo_ref: main", "    repo_ref: main\n    image_uri: r/x:1");
    expect(brief(check(text).problems)).toEqual(["14:5 error field-not-applicable"]);
    const override = text.replace(
      "  source: gitrepo",
      "  source: gitrepo\n  revision_source: internal_container",
    );
    expect(check(override).problems).toEqual([]);
  });

  it("source_tarball_path is never written in a manifest", () => {
    const text = GITREPO.replace(
      "    repo_ref: main",
      "    repo_ref: main\n    source_tarball_path: uploads/x.tgz",
    );
    expect(brief(check(text).problems)).toEqual(["14:5 error source-tarball-path"]);
  });

  it("build_on_push with a tag ref", () => {
    const { problems } = check(GITREPO.replace("repo_ref: main", "repo_ref: refs/tags/v1.0.0"));
    expect(brief(problems)).toEqual(["11:5 error build-on-push-tag"]);
    expect(
      check(GITREPO.replace("repo_ref: main", "repo_ref: refs/tags/v1").replace("push: true", "push: false"))
        .problems,
    ).toEqual([]);
  });
});

describe("secrets", () => {
  const withSecrets = (secrets: string) => GITREPO.replace(/ {2}secrets:[\s\S]*$/, `  secrets:\n${secrets}`);

  it("value and valueFrom together, neither, or an empty value", () => {
    const text = withSecrets(
      "    - name: A\n      value: x\n      valueFrom: {env: A}\n    - name: B\n    - name: C\n      value: ''\n",
    );
    expect(brief(check(text).problems)).toEqual([
      "18:7 error secret-value-conflict",
      "19:7 error secret-value-missing",
      "21:7 error secret-value-missing",
    ]);
  });

  it("duplicate names", () => {
    const text = withSecrets("    - {name: A, value: x}\n    - {name: A, value: y}\n");
    expect(brief(check(text).problems)).toEqual(["17:14 error duplicate-secret"]);
  });

  it("a file outside the manifest root", () => {
    const text = withSecrets("    - name: A\n      valueFrom: {file: ../../etc/passwd}\n");
    expect(brief(check(text, "team/m.yaml").problems)).toEqual(["17:25 error secret-file-outside-root"]);
    const inside = withSecrets("    - name: A\n      valueFrom: {file: ../secrets/a.txt}\n");
    expect(check(inside, "team/m.yaml").problems).toEqual([]);
    const absolute = withSecrets("    - name: A\n      valueFrom: {file: /etc/passwd}\n");
    expect(brief(check(absolute).problems)).toEqual(["17:25 error secret-file-outside-root"]);
  });

  it("plumb's own credentials as a secret's variable", () => {
    const text = withSecrets("    - name: A\n      valueFrom: {env: PLUMB_GIT_TOKEN}\n");
    expect(brief(check(text).problems)).toEqual(["17:19 error secret-env-credential"]);
    const other = withSecrets("    - name: A\n      valueFrom: {env: PLUMB_TEST_TOKEN}\n");
    expect(check(other).problems).toEqual([]);
  });

  it("a file inside a .git directory", () => {
    for (const file of [".git/config", "./sub/.git/config", "..\\\\.git\\\\config"]) {
      const text = withSecrets(`    - name: A\n      valueFrom: {file: "${file}"}\n`);
      expect(brief(check(text, "team/m.yaml").problems), file).toEqual(["17:25 error secret-file-in-git"]);
    }
    const gitish = withSecrets("    - name: A\n      valueFrom: {file: secrets/.gitkeep}\n");
    expect(check(gitish, "team/m.yaml").problems).toEqual([]);
  });

  it("a literal secret's value written again elsewhere (an alias, or a copy): refused there, never quoted", () => {
    const key = "sk-live-0123456789abcdef";
    // Labels after the secret: an alias needs its anchor before it.
    const text = (value: string) => yaml`
apiVersion: plumb/v1
kind: Deployment
spec:
  source: external_container
  source_config: {custom_url: "https://agent.example.com/v1-${value}"}
  secrets:
    - {name: OPENAI_API_KEY, value: &lit ${value}}
metadata:
  name: support-agent
  labels: {team: *lit, owner: platform}
`;
    const problems = check(text(key)).problems;
    expect(brief(problems)).toEqual(["5:31 error secret-value-reused", "10:18 error secret-value-reused"]);
    for (const p of problems) expect(p.message).not.toContain(key);
    expect(problems[0]!.message).toContain("secret OPENAI_API_KEY");
    // A short literal counts only as a whole value (the alias), one under 4 characters not at all.
    expect(brief(check(text("abcdef")).problems)).toEqual(["10:18 error secret-value-reused"]);
    expect(check(text("abc")).problems).toEqual([]);
  });
});

const EXTERNAL = (resourceSpec: string) => yaml`
apiVersion: plumb/v1
kind: Deployment
metadata: {name: billing}
spec:
  source: external_container
  source_config:
    listener_id: 10000000-0000-4000-8000-000000000001
    resource_spec:
${resourceSpec}
  source_revision_config:
    image_uri: registry.example/billing:1
`;

describe("resource_spec", () => {
  it("CPU bounds on the value as written", () => {
    const { problems } = check(EXTERNAL("      cpu: 0.05\n      cpu_limit: 17\n      queue_cpu: 8"));
    expect(brief(problems)).toEqual(["9:12 error cpu-out-of-range", "10:18 error cpu-out-of-range"]);
    expect(problems[1]!.message).toContain("0.1 to 16 cores");
  });

  it("warns with the rounded value, half up on the decimal as written", () => {
    const { problems, manifests } = check(
      EXTERNAL("      cpu: 0.25\n      cpu_limit: 0.35\n      redis_cpu: 1.5"),
    );
    expect(brief(problems)).toEqual(["9:12 warning cpu-rounded", "10:18 warning cpu-rounded"]);
    expect(problems[0]!.message).toContain("rounds it to 0.3");
    expect(problems[1]!.message).toContain("rounds it to 0.4");
    expect(manifests).toHaveLength(1);
  });

  it("millicores get a hint", () => {
    const { problems } = check(EXTERNAL("      cpu: 500m"));
    expect(brief(problems)).toEqual(["9:12 error invalid-type"]);
    expect(problems[0]!.message).toContain("not 500m");
  });

  it("YAML 1.1 booleans (yes, off, N) where a boolean is wanted get a hint with the YAML 1.2 spelling", () => {
    for (const [written, meant] of [
      ["yes", "true"],
      ["off", "false"],
      ["N", "false"],
      ["On", "true"],
    ]) {
      const { problems } = check(GITREPO.replace("build_on_push: true", `build_on_push: ${written}`));
      expect(brief(problems)).toEqual(["11:20 error invalid-type"]);
      expect(problems[0]!.message).toContain(`"${written}" is text in YAML 1.2`);
      expect(problems[0]!.message.endsWith(`write ${meant}`)).toBe(true);
    }
    // Text where text is wanted, or a word that is no YAML 1.1 boolean: no hint.
    const { problems } = check(GITREPO.replace("build_on_push: true", "build_on_push: maybe"));
    expect(problems[0]!.message).not.toContain("YAML 1.1");
  });

  it("volume mounts must name a declared volume, in the main container and in containers", () => {
    const spec = [
      "      volumes: [{name: cache, emptyDir: {}}, {name: cache}]",
      "      volume_mounts: [{name: cahce, mountPath: /c}]",
      "      sidecars:",
      "        - name: side",
      "          image: x",
      "          volumeMounts: [{name: data, mountPath: /d}]",
      "          env: [{name: A, value: x, valueFrom: {secretKeyRef: {}}}]",
      "      init_containers: [{name: side, image: y}]",
    ].join("\n");
    const { problems } = check(EXTERNAL(spec));
    expect(brief(problems)).toEqual([
      "9:53 error duplicate-volume",
      "10:30 error unknown-volume",
      "12:17 error duplicate-container",
      "14:33 error unknown-volume",
      "15:37 error env-value-conflict",
    ]);
    expect(problems[1]!.message).toContain('did you mean "cache"');
  });

  it("a secret and a secret reference filling the same variable", () => {
    const text = `${EXTERNAL("      cpu: 1")}  secrets: [{name: DB, value: x}]\n  secret_references:\n    - {name: DB, secret_name: s, secret_key: k}\n`;
    expect(brief(check(text).problems)).toEqual(["14:14 error duplicate-secret"]);
  });

  it("DNS-label names of containers and volumes", () => {
    const { problems } = check(
      EXTERNAL("      volumes: [{name: Cache_1}]\n      sidecars: [{name: -x, image: i}]"),
    );
    expect(brief(problems)).toEqual(["9:24 error invalid-name", "10:25 error invalid-name"]);
  });
});

describe("rules across files", () => {
  const deployment = (name: string) =>
    `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  source: internal_container\n`;
  const access =
    "apiVersion: plumb/v1\nkind: OrganizationAccess\nmetadata: {name: acme}\nspec: {invites_enabled: true}\n";

  it("duplicate deployment names are reported on the later file", () => {
    const { problems, manifests } = checkFiles({ "b.yaml": deployment("x"), "a.yaml": deployment("x") });
    expect(problems.map((p) => `${p.file}:${p.line}:${p.column} ${p.code}`)).toEqual([
      "b.yaml:4:9 duplicate-name",
    ]);
    expect(problems[0]!.message).toContain("a.yaml:4:9");
    expect(manifests.map((m) => m.file)).toEqual(["a.yaml"]);
  });

  it("names that differ only by case are duplicates (their status files would collide)", () => {
    const { problems, manifests } = checkFiles({
      "a.yaml": deployment("dupe"),
      "b.yaml": deployment("Dupe"),
    });
    expect(problems.map((p) => `${p.file}:${p.line}:${p.column} ${p.code}`)).toEqual([
      "b.yaml:4:9 duplicate-name",
    ]);
    expect(problems[0]!.message).toContain("differs only by case from dupe at a.yaml:4:9");
    expect(manifests.map((m) => m.file)).toEqual(["a.yaml"]);
  });

  it("environments on an OrganizationAccess is an unknown field that says why", () => {
    const scoped = access.replace("metadata: {name: acme}", "metadata: {name: acme, environments: [prod]}");
    const { problems } = check(scoped);
    expect(brief(problems)).toEqual(["3:24 error unknown-field"]);
    expect(problems[0]!.message).toBe(
      'unknown field "environments" in metadata: an OrganizationAccess is the same in every environment, and plan and apply plan it in each one against that environment\'s organization (docs/manifests.md)',
    );
    // A Deployment's own unknown field says nothing of the kind.
    expect(check(deployment("x").replace("name: x", "name: x\n  envs: [prod]")).problems[0]!.message).toBe(
      'unknown field "envs" in metadata',
    );
  });

  it("at most one OrganizationAccess", () => {
    const { problems } = checkFiles({ "a.yaml": access, "b.yaml": `${access}---\n${access}` });
    expect(problems.map((p) => `${p.file}:${p.line}:${p.column} ${p.code}`)).toEqual([
      "b.yaml:2:1 duplicate-organization-access",
      "b.yaml:7:1 duplicate-organization-access",
    ]);
  });
});

describe("source_path", () => {
  const SOURCE = yaml`
apiVersion: plumb/v1
kind: Deployment
metadata: {name: docs}
spec:
  source: internal_source
  source_path: ./agent
  source_revision_config:
    graph_config_path: langgraph.json
`;

  it("is accepted on internal_source, inside the root", () => {
    expect(check(SOURCE).problems).toEqual([]);
    expect(check(SOURCE.replace("./agent", "../agents/docs"), "team/docs.yaml").problems).toEqual([]);
  });

  it("is required for internal_source, at the source key", () => {
    const { problems, manifests } = check(SOURCE.replace("  source_path: ./agent\n", ""));
    expect(brief(problems)).toEqual(["5:3 error source-path-required"]);
    expect(problems[0]!.message).toBe(
      "source internal_source needs spec.source_path: the directory plumb packs and uploads at apply time",
    );
    expect(manifests).toEqual([]);
  });

  it("is an error for every other source, at its key", () => {
    for (const source of ["gitrepo", "internal_container", "external_container"]) {
      const { problems } = check(SOURCE.replace("source: internal_source", `source: ${source}`));
      const found = problems.find((p) => p.field === "spec.source_path")!;
      expect(`${found.line}:${found.column} ${found.code}`).toBe("6:3 field-not-applicable");
      expect(found.message).toBe(`source_path applies only to source internal_source, not ${source}`);
    }
  });

  it("may not leave the manifest root (absolute or ..), at the value", () => {
    for (const [path, file] of [
      ["../elsewhere", "docs.yaml"],
      ["/srv/agent", "docs.yaml"],
      ["../../x", "team/docs.yaml"],
    ] as const) {
      const { problems } = check(SOURCE.replace("./agent", path), file);
      expect(brief(problems)).toEqual(["6:16 error source-path-outside-root"]);
      expect(problems[0]!.message).toBe(`source_path ${path} is outside the manifest root`);
    }
  });

  it("is a non-empty string (schema)", () => {
    expect(brief(check(SOURCE.replace("./agent", '""')).problems)).toEqual(["6:16 error invalid-value"]);
  });
});
