# Source: Horovod's examples/elastic/pytorch/pytorch_mnist_elastic.py (horovod/horovod, Apache License 2.0),
# run with `import unison as hvd` under unison's launcher, which restarts the job from the last
# `state.commit()` when a process fails:
#   UNISON_DATA_DIR=../shared/data unison launch --nproc-per-node 2 --max-restarts 3 examples/horovod/pytorch_mnist_elastic.py
#
# Lines changed from the example:
#   - `import horovod.torch as hvd` -> `import unison as hvd`
#   - `from torchvision import datasets, transforms` dropped (torchvision is not installed here):
#     `datasets.MNIST(..., transform=Compose([ToTensor(), Normalize((0.1307,), (0.3081,))]))` ->
#     `mnist_dataset(train)`, a TensorDataset from unison's MNIST loader
#     (`hvd.keras.datasets.mnist.load_data()`, $UNISON_DATA_DIR) with the same scaling and
#     normalisation; $TRAIN_SAMPLES / $TEST_SAMPLES cut it (CI)
#   - added: this header and the ruff directive below it (the example is kept as Horovod wrote it)
# ruff: noqa

import argparse
import os
from filelock import FileLock

import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data.distributed
import unison as hvd


def mnist_dataset(train):
    """MNIST as torchvision gives it after ToTensor() + Normalize((0.1307,), (0.3081,))."""
    (x_train, y_train), (x_test, y_test) = hvd.keras.datasets.mnist.load_data()
    images, labels = (x_train, y_train) if train else (x_test, y_test)
    limit = os.environ.get("TRAIN_SAMPLES" if train else "TEST_SAMPLES")
    if limit:
        images, labels = images[: int(limit)], labels[: int(limit)]
    images = (torch.from_numpy(images).float().div(255).unsqueeze(1) - 0.1307) / 0.3081
    return torch.utils.data.TensorDataset(images, torch.from_numpy(labels).long())


# Training settings
parser = argparse.ArgumentParser(description="PyTorch MNIST Example")
parser.add_argument(
    "--batch-size", type=int, default=64, metavar="N", help="input batch size for training (default: 64)"
)
parser.add_argument(
    "--test-batch-size", type=int, default=1000, metavar="N", help="input batch size for testing (default: 1000)"
)
parser.add_argument("--epochs", type=int, default=10, metavar="N", help="number of epochs to train (default: 10)")
parser.add_argument("--lr", type=float, default=0.01, metavar="LR", help="learning rate (default: 0.01)")
parser.add_argument("--momentum", type=float, default=0.5, metavar="M", help="SGD momentum (default: 0.5)")
parser.add_argument("--no-cuda", action="store_true", default=False, help="disables CUDA training")
parser.add_argument("--seed", type=int, default=42, metavar="S", help="random seed (default: 42)")
parser.add_argument(
    "--log-interval", type=int, default=10, metavar="N", help="how many batches to wait before logging training status"
)
parser.add_argument(
    "--fp16-allreduce", action="store_true", default=False, help="use fp16 compression during allreduce"
)
parser.add_argument("--use-adasum", action="store_true", default=False, help="use adasum algorithm to do reduction")
parser.add_argument(
    "--data-dir", help="location of the training dataset in the local filesystem (will be downloaded if needed)"
)

args = parser.parse_args()
args.cuda = not args.no_cuda and torch.cuda.is_available()

# Horovod: initialize library.
hvd.init()
torch.manual_seed(args.seed)

if args.cuda:
    # Horovod: pin GPU to local rank.
    torch.cuda.set_device(hvd.local_rank())
    torch.cuda.manual_seed(args.seed)


# Horovod: limit # of CPU threads to be used per worker.
torch.set_num_threads(1)

kwargs = {"num_workers": 1, "pin_memory": True} if args.cuda else {}
data_dir = args.data_dir or "./data"
with FileLock(os.path.expanduser("~/.horovod_lock")):
    train_dataset = mnist_dataset(True)
# Horovod: use DistributedSampler to partition the training data.
train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset, num_replicas=hvd.size(), rank=hvd.rank())
train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size, sampler=train_sampler, **kwargs)

test_dataset = mnist_dataset(False)
# Horovod: use DistributedSampler to partition the test data.
test_sampler = torch.utils.data.distributed.DistributedSampler(test_dataset, num_replicas=hvd.size(), rank=hvd.rank())
test_loader = torch.utils.data.DataLoader(test_dataset, batch_size=args.test_batch_size, sampler=test_sampler, **kwargs)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x)


model = Net()

# By default, Adasum doesn't need scaling up learning rate.
lr_scaler = hvd.size() if not args.use_adasum else 1

if args.cuda:
    # Move model to GPU.
    model.cuda()
    # If using GPU Adasum allreduce, scale learning rate by local_size.
    if args.use_adasum and hvd.nccl_built():
        lr_scaler = hvd.local_size()

# Horovod: scale learning rate by lr_scaler.
optimizer = optim.SGD(model.parameters(), lr=args.lr * lr_scaler, momentum=args.momentum)

# Horovod: (optional) compression algorithm.
compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none


def metric_average(val, name):
    tensor = torch.tensor(val)
    avg_tensor = hvd.allreduce(tensor, name=name)
    return avg_tensor.item()


@hvd.elastic.run
def train(state):
    # post synchronization event (worker added, worker removed) init ...
    for state.epoch in range(state.epoch, args.epochs + 1):
        state.model.train()

        train_sampler.set_epoch(state.epoch)
        steps_remaining = len(train_loader) - state.batch

        for state.batch, (data, target) in enumerate(train_loader):
            if state.batch >= steps_remaining:
                break

            if args.cuda:
                data, target = data.cuda(), target.cuda()
            state.optimizer.zero_grad()
            output = state.model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            state.optimizer.step()
            if state.batch % args.log_interval == 0:
                # Horovod: use train_sampler to determine the number of examples in
                # this worker's partition.
                print(
                    "Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                        state.epoch,
                        state.batch * len(data),
                        len(train_sampler),
                        100.0 * state.batch / len(train_loader),
                        loss.item(),
                    )
                )
            state.commit()
        state.batch = 0


def test():
    model.eval()
    test_loss = 0.0
    test_accuracy = 0.0
    for data, target in test_loader:
        if args.cuda:
            data, target = data.cuda(), target.cuda()
        output = model(data)
        # sum up batch loss
        test_loss += F.nll_loss(output, target, size_average=False).item()
        # get the index of the max log-probability
        pred = output.data.max(1, keepdim=True)[1]
        test_accuracy += pred.eq(target.data.view_as(pred)).cpu().float().sum()

    # Horovod: use test_sampler to determine the number of examples in
    # this worker's partition.
    test_loss /= len(test_sampler)
    test_accuracy /= len(test_sampler)

    # Horovod: average metric values across workers.
    test_loss = metric_average(test_loss, "avg_loss")
    test_accuracy = metric_average(test_accuracy, "avg_accuracy")

    # Horovod: print output only on first rank.
    if hvd.rank() == 0:
        print("\nTest set: Average loss: {:.4f}, Accuracy: {:.2f}%\n".format(test_loss, 100.0 * test_accuracy))


# Horovod: wrap optimizer with DistributedOptimizer.
optimizer = hvd.DistributedOptimizer(
    optimizer,
    named_parameters=model.named_parameters(),
    compression=compression,
    op=hvd.Adasum if args.use_adasum else hvd.Average,
)


# adjust learning rate on reset
def on_state_reset():
    for param_group in optimizer.param_groups:
        param_group["lr"] = args.lr * hvd.size()


state = hvd.elastic.TorchState(model, optimizer, epoch=1, batch=0)
state.register_reset_callbacks([on_state_reset])
train(state)
test()
