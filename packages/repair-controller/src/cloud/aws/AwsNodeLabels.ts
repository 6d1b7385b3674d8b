/**
 * What the AWS provider reads from a Node. Well-known labels come from the kubelet / EKS; the
 * `nodemend.io/*` annotations are ours (set them in the node group's bootstrap, or let the fake
 * cloud set them). A replacement uses, in order:
 *  - launch template: annotation `nodemend.io/launch-template-id` or `-name` (+ `-version`,
 *    default `$Default`), else the old instance's `aws:ec2launchtemplate:id`/`:version` tags
 *    (EC2 puts these on every instance launched from a template);
 *  - instance type: label `node.kubernetes.io/instance-type`, else the old instance's type;
 *  - subnet: annotation `nodemend.io/subnet-id`, else the old instance's subnet; when that zone is
 *    shifted away, the first configured `aws.subnets` entry in another zone;
 *  - pool: the value of the configured pool label (default `nodemend.io/pool`), written as a tag.
 */
export const INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
export const LEGACY_INSTANCE_TYPE_LABEL = "beta.kubernetes.io/instance-type"
export const ZONE_LABEL = "topology.kubernetes.io/zone"
export const ZONE_ID_LABEL = "topology.k8s.aws/zone-id"

export const LAUNCH_TEMPLATE_ID_ANNOTATION = "nodemend.io/launch-template-id"
export const LAUNCH_TEMPLATE_NAME_ANNOTATION = "nodemend.io/launch-template-name"
export const LAUNCH_TEMPLATE_VERSION_ANNOTATION = "nodemend.io/launch-template-version"
export const SUBNET_ID_ANNOTATION = "nodemend.io/subnet-id"

/** Tags EC2 writes on instances launched from a launch template. */
export const EC2_LAUNCH_TEMPLATE_ID_TAG = "aws:ec2launchtemplate:id"
export const EC2_LAUNCH_TEMPLATE_VERSION_TAG = "aws:ec2launchtemplate:version"
/** Tag we write on a replacement: the instance it replaces. */
export const REPLACES_TAG = "nodemend.io/replaces"
