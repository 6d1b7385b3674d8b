/**
 * The EC2 tags the AWS provider reads and writes. A replacement is built only from what EC2 reports about the
 * old instance (DescribeInstances, read before the repair touches the node), never from the Node's labels or
 * annotations, which the node itself can write:
 *  - launch template: the old instance's `aws:ec2launchtemplate:id`/`:version` tags (EC2 puts these on every
 *    instance launched from a template);
 *  - instance type and subnet: the old instance's; when its zone is shifted away, the first configured
 *    `aws.subnets` entry in another zone;
 *  - pool: the old instance's tag named by `poolLabel`, written on the replacement under the same key.
 */

/** Tags EC2 writes on instances launched from a launch template. */
export const EC2_LAUNCH_TEMPLATE_ID_TAG = "aws:ec2launchtemplate:id"
export const EC2_LAUNCH_TEMPLATE_VERSION_TAG = "aws:ec2launchtemplate:version"
/** Tag EC2 Auto Scaling writes on its instances. */
export const ASG_NAME_TAG = "aws:autoscaling:groupName"
