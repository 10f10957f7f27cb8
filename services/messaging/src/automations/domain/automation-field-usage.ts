// Which automations write a subscriber field (the API contract, automations: "Automations report their field
// usages (SET_FIELD: write usages that block archival) to the subscriber service's field usage report").

export interface AutomationSteps {
  id: string;
  name: string;
  active: boolean;
  steps: ReadonlyArray<{ type: string; fieldId?: string }>;
}

export interface AutomationFieldUsage {
  category: 'AUTOMATION';
  area: string;
  artifactId: string;
  artifactName: string;
  status: 'ACTIVE' | 'INACTIVE';
  reason: string;
  link: string;
  permanentDeleteBlocking: true;
  effect: 'BLOCKS_ARCHIVE';
}

/**
 * One usage per SET_FIELD step of the automation that writes the field. Inactive automations count
 * too: activating one would write the field again, and its waiting runs may still reach the step.
 */
export function setFieldUsages(automation: AutomationSteps, fieldId: string): AutomationFieldUsage[] {
  const id = fieldId.toLowerCase();
  const usages: AutomationFieldUsage[] = [];
  automation.steps.forEach((step, i) => {
    if (step.type !== 'SET_FIELD' || step.fieldId?.toLowerCase() !== id) return;
    usages.push({
      category: 'AUTOMATION',
      area: `steps[${i}]`,
      artifactId: automation.id,
      artifactName: automation.name,
      status: automation.active ? 'ACTIVE' : 'INACTIVE',
      reason: `step ${i + 1} of the automation sets the field`,
      link: `/automations/${automation.id}`,
      permanentDeleteBlocking: true,
      effect: 'BLOCKS_ARCHIVE',
    });
  });
  return usages;
}
